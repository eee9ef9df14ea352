import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear layer, scaled by a constant, then a sigmoid."""

    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x):
        x = self.gemm(x)
        x = x * self.scale
        return torch.sigmoid(x)


def get_inputs():
    return [torch.rand(8192, 4096)]


def get_init_inputs():
    return [4096, 2048, 0.5]
