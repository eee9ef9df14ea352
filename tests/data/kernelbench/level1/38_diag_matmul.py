import torch
import torch.nn as nn


class Model(nn.Module):
    """A diagonal matrix made from a vector, times a matrix: diag(a) @ B."""

    def __init__(self):
        super().__init__()

    def forward(self, a, B):
        return torch.diag(a) @ B


N = 8192
M = 8192


def get_inputs():
    a = torch.rand(N)
    B = torch.rand(N, M)
    return [a, B]


def get_init_inputs():
    return []
