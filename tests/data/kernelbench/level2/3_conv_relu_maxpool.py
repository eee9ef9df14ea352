import torch
import torch.nn as nn


class Model(nn.Module):
    """AlexNet's first layer: Conv2d 11x11 stride 4 padding 2 (3 to 96 channels), ReLU, max pool 3/2."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 96, kernel_size=11, stride=4, padding=2)
        self.pool = nn.MaxPool2d(kernel_size=3, stride=2)

    def forward(self, x):
        return self.pool(torch.relu(self.conv(x)))


def get_inputs():
    return [torch.rand(256, 3, 224, 224)]


def get_init_inputs():
    return []
