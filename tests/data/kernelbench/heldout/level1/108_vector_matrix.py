import torch
import torch.nn as nn


class Model(nn.Module):
    """A row vector (1x131072) times a 131072x8192 matrix."""

    def __init__(self):
        super().__init__()

    def forward(self, v, m):
        return torch.matmul(v, m)


def get_inputs():
    return [torch.randn(1, 131072), torch.randn(131072, 8192)]


def get_init_inputs():
    return []
