import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """SwiGLU feed-forward gate: silu(x W1^T) * (x W2^T), no biases."""

    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        return F.silu(self.w1(x)) * self.w2(x)


def get_inputs():
    return [torch.randn(16384, 2048)]


def get_init_inputs():
    return [2048, 2048]
