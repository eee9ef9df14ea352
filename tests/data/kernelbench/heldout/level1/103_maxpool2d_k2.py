import torch
import torch.nn as nn


class Model(nn.Module):
    """2x2 max pooling with stride 2 over 128-channel 256x256 maps."""

    def __init__(self, kernel_size):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(64, 128, 256, 256)]


def get_init_inputs():
    return [2]
