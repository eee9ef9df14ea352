import torch
import torch.nn as nn


class Model(nn.Module):
    """Batched matrix product: 64 products of 1024x2048 by 2048x1024."""

    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.bmm(a, b)


def get_inputs():
    return [torch.rand(64, 1024, 2048), torch.rand(64, 2048, 1024)]


def get_init_inputs():
    return []
