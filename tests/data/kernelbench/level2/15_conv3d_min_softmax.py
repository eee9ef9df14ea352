import torch
import torch.nn as nn


class Model(nn.Module):
    """Conv3d 3 -> 24 channels, the minimum over depth, then softmax over the channels."""

    def __init__(self, in_channels, out_channels, kernel_size, dim):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size)
        self.dim = dim

    def forward(self, x):
        x = self.conv(x)
        x = torch.min(x, dim=self.dim)[0]
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.rand(128, 3, 24, 64, 64)]


def get_init_inputs():
    return [3, 24, 3, 2]
