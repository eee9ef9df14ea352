import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Leaky ReLU with the slope given at construction."""

    def __init__(self, negative_slope: float):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        return F.leaky_relu(x, negative_slope=self.negative_slope)


batch = 8192
features = 65536


def get_inputs():
    return [torch.randn(batch, features)]


def get_init_inputs():
    return [0.05]
