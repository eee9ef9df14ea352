import torch
import torch.nn as nn


class Model(nn.Module):
    """ConvTranspose3d 3x3x3, stride 2, padding 1, output padding 1 (32 to 16 channels), scaled, then ReLU."""

    def __init__(self, in_channels, out_channels, kernel_size, scale):
        super().__init__()
        self.deconv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=2, padding=1,
                                         output_padding=1)
        self.scale = scale

    def forward(self, x):
        x = self.deconv(x)
        return torch.relu(x * self.scale)


batch_size = 8
in_channels = 32
out_channels = 16
depth, height, width = 32, 64, 64


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, 3, 0.5]
