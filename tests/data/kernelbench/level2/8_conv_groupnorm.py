import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv2d 3x3 then GroupNorm with 8 groups."""

    def __init__(self, in_channels, out_channels, groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.norm = nn.GroupNorm(groups, out_channels)

    def forward(self, x):
        return self.norm(self.conv(x))


def get_inputs():
    return [torch.rand(32, 64, 128, 128)]


def get_init_inputs():
    return [64, 64, 8]
