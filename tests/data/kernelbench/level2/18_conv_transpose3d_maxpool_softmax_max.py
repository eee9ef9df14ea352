import torch
import torch.nn as nn


class Model(nn.Module):
    """ConvTranspose3d 16 -> 32, stride 2, MaxPool3d 2, softmax over channels, minus a bias, swish, max over channels."""

    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.ConvTranspose3d(in_channels, out_channels, 3, stride=2, padding=1, output_padding=1)
        self.pool = nn.MaxPool3d(2)
        self.subtract = nn.Parameter(torch.randn(out_channels) * 0.1)

    def forward(self, x):
        x = self.pool(self.conv(x))
        x = torch.softmax(x, dim=1)
        x = x - self.subtract.view(1, -1, 1, 1, 1)
        x = x * torch.sigmoid(x)
        return torch.max(x, dim=1)[0]


def get_inputs():
    return [torch.rand(32, 16, 16, 32, 32)]


def get_init_inputs():
    return [16, 32]
