import torch
import torch.nn as nn


class Model(nn.Module):
    """ConvTranspose2d 4x4, stride 2, padding 1: 64 to 32 channels, 32 images of 256x256 doubled to 512x512."""

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.deconv(x)


def get_inputs():
    return [torch.rand(32, 64, 256, 256)]


def get_init_inputs():
    return [64, 32, 4, 2, 1]
