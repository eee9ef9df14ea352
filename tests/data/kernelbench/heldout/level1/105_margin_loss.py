import torch
import torch.nn as nn


class Model(nn.Module):
    """A margin loss: the mean of relu(margin - predictions * targets) over 16384x65536 pairs."""

    def __init__(self, margin: float):
        super().__init__()
        self.margin = margin

    def forward(self, predictions, targets):
        return torch.mean(torch.relu(self.margin - predictions * targets))


def get_inputs():
    return [torch.randn(16384, 65536), torch.randn(16384, 65536)]


def get_init_inputs():
    return [1.0]
