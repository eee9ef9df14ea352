import torch
import torch.nn as nn


class Model(nn.Module):
    """Max pooling 3x3, stride 2, padding 1, on 128 maps of 64x256x256."""

    def __init__(self, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(128, 64, 256, 256)]


def get_init_inputs():
    return [3, 2, 1]
