import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    # The inner dimensions do not match.
    return [torch.rand(8, 16), torch.rand(32, 8)]


def get_init_inputs():
    return []
