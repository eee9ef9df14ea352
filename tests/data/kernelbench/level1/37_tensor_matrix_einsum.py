import torch
import torch.nn as nn


class Model(nn.Module):
    """A 4-D tensor times a matrix over its last dim, written as an einsum."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.einsum("bijl,lk->bijk", A, B)


b = 8
i = 128
j = 256
l = 256
k = 768


def get_inputs():
    A = torch.rand(b, i, j, l)
    B = torch.rand(l, k)
    return [A, B]


def get_init_inputs():
    return []
