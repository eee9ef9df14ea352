import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv2d 3x3 (32 to 64 channels, no padding), ReLU, then 2x2 average pooling."""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=3)
        self.pool = nn.AvgPool2d(kernel_size=2, stride=2)

    def forward(self, x):
        return self.pool(torch.relu(self.conv(x)))


def get_inputs():
    return [torch.rand(64, 32, 256, 256)]


def get_init_inputs():
    return [32, 64]
