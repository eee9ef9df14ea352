import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv2d 3x3 (16 to 64 channels), 2x2 average pooling, sigmoid, then a sum over everything but
    the batch."""

    def __init__(self, in_channels, out_channels, kernel_size, pool):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.pool = nn.AvgPool2d(pool)

    def forward(self, x):
        x = self.conv(x)
        x = self.pool(x)
        x = torch.sigmoid(x)
        return torch.sum(x, dim=[1, 2, 3])


batch_size = 128
in_channels = 16
out_channels = 64
size = 256


def get_inputs():
    return [torch.rand(batch_size, in_channels, size, size)]


def get_init_inputs():
    return [in_channels, out_channels, 3, 2]
