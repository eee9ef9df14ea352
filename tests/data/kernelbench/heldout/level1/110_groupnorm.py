import torch
import torch.nn as nn


class Model(nn.Module):
    """GroupNorm with 8 groups over 64 channels of 512x512 maps."""

    def __init__(self, groups, channels):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups=groups, num_channels=channels)

    def forward(self, x):
        return self.gn(x)


def get_inputs():
    return [torch.randn(32, 64, 512, 512)]


def get_init_inputs():
    return [8, 64]
