import torch
import torch.nn as nn


class Model(nn.Module):
    """Average pooling, 3x3 window, stride 2, padding 1, over a batch of 64-channel 512x512 maps."""

    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.AvgPool2d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(x)


batch = 32
channels = 64
height = 512
width = 512


def get_inputs():
    return [torch.rand(batch, channels, height, width)]


def get_init_inputs():
    return [3, 2, 1]
