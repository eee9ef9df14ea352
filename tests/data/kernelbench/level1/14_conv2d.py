import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv2d 3x3, padding 1, 64 to 128 channels, on 32 images of 128x128."""

    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.rand(32, 64, 128, 128)]


def get_init_inputs():
    return [64, 128, 3]
