import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, n: int):
        return x * n


def get_inputs():
    return [torch.rand(8, 8), 3]


def get_init_inputs():
    return []
