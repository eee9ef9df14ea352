import torch
import torch.nn as nn


class Model(nn.Module):
    """Batched product of 32 pairs of 1024x2048 and 2048x1024 matrices, scaled, then ReLU."""

    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, a, b):
        return torch.relu(torch.bmm(a, b) * self.scale)


batch = 32
m, k, n = 1024, 2048, 1024


def get_inputs():
    return [torch.randn(batch, m, k), torch.randn(batch, k, n)]


def get_init_inputs():
    return [0.125]
