import torch
import torch.nn as nn


class Model(nn.Module):
    """Matrix-vector product: a 4096x262144 matrix times a 262144x1 column."""

    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, v)


M = 4096
K = 262144


def get_inputs():
    a = torch.randn(M, K)
    v = torch.randn(K, 1)
    return [a, v]


def get_init_inputs():
    return []
