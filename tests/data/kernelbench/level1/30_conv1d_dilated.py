import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv1d 7 taps with dilation 2 and padding 6 (length kept), 64 channels, 64 sequences of 65536."""

    def __init__(self, channels, kernel_size, dilation):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, kernel_size, dilation=dilation,
                              padding=dilation * (kernel_size - 1) // 2, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(64, 64, 65536)]


def get_init_inputs():
    return [64, 7, 2]
