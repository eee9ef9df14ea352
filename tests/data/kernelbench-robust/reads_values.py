import torch
import torch.nn as nn


class Model(nn.Module):
    """get_inputs() reads a value of what it drew (a meta tensor has none), so it runs for real;
    it also returns one tensor rather than a list."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    x = torch.rand(256, 512)
    if float(x.max()) > 2:
        x = x / 2
    return x


def get_init_inputs():
    return []
