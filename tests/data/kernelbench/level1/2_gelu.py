import torch
import torch.nn as nn


class Model(nn.Module):
    """GELU (the exact, erf form) as a module, over a 16384x32768 matrix."""

    def __init__(self):
        super().__init__()
        self.act = nn.GELU()

    def forward(self, x):
        return self.act(x)


def get_inputs():
    return [torch.randn(16384, 32768)]


def get_init_inputs():
    return []
