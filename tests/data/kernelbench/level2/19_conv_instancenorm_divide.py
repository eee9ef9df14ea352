import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv2d 3 -> 64 channels 3x3, nn.InstanceNorm2d, divided by a constant."""

    def __init__(self, in_channels, out_channels, kernel_size, divide_by):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.norm = nn.InstanceNorm2d(out_channels)
        self.divide_by = divide_by

    def forward(self, x):
        return self.norm(self.conv(x)) / self.divide_by


def get_inputs():
    return [torch.rand(128, 3, 256, 256)]


def get_init_inputs():
    return [3, 64, 3, 2.0]
