import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv3d 3x3x3, padding 1, 16 to 32 channels, on 8 volumes of 32x128x128."""

    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=1)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(8, 16, 32, 128, 128)]


def get_init_inputs():
    return [16, 32, 3]
