import torch
import torch.nn as nn


class Model(nn.Module):
    """C = A @ B with A 4096x8192 and B 8192x4096."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


M = 4096
K = 8192
N = 4096


def get_inputs():
    return [torch.rand(M, K), torch.rand(K, N)]


def get_init_inputs():
    return []
