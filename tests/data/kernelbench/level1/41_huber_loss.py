import torch
import torch.nn as nn


class Model(nn.Module):
    """Huber (smooth L1) loss through the functional form, which broadcasts its operands first."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return torch.nn.functional.smooth_l1_loss(predictions, targets)


batch_size = 32768
input_shape = (32768,)


def get_inputs():
    return [torch.randn(batch_size, *input_shape), torch.randn(batch_size, *input_shape)]


def get_init_inputs():
    return []
