import torch
import torch.nn as nn


class Model(nn.Module):
    """AvgPool1d of 8 taps, stride 1, padding 4, over rows of 65536."""

    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.pool = nn.AvgPool1d(kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.rand(64, 128, 65536)]


def get_init_inputs():
    return [8, 1, 4]
