import torch
import torch.nn as nn


class Model(nn.Module):
    """MaxPool3d 3x3x3, stride 2, padding 1, dilation 3, on 16 volumes of 32 channels of 96^3."""

    def __init__(self, kernel_size, stride, padding, dilation):
        super().__init__()
        self.pool = nn.MaxPool3d(kernel_size, stride=stride, padding=padding, dilation=dilation)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.rand(16, 32, 96, 96, 96)]


def get_init_inputs():
    return [3, 2, 1, 3]
