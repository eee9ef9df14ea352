import torch
import torch.nn as nn


class Model(nn.Module):
    """LayerNorm of a residual sum, x + y, over the last dim (4096)."""

    def __init__(self, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=1e-5)

    def forward(self, x, y):
        return self.norm(x + y)


def get_inputs():
    return [torch.randn(65536, 4096), torch.randn(65536, 4096)]


def get_init_inputs():
    return [4096]
