import torch
import torch.nn as nn


class Model(nn.Module):
    """Depthwise Conv2d 3x3 (groups = channels), padding 1, 128 channels, 32 images of 256x256."""

    def __init__(self, channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, kernel_size, padding=kernel_size // 2, groups=channels)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(32, 128, 256, 256)]


def get_init_inputs():
    return [128, 3]
