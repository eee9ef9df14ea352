import torch
import torch.nn as nn


class Model(nn.Module):
    """x @ W, then clamped to [-1, 1] by a function kept in an attribute (TorchScript cannot script
    a Python lambda, so this model is traced)."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features) * 0.01)
        self.activation = lambda t: torch.clamp(t, -1.0, 1.0)

    def forward(self, x):
        return self.activation(x @ self.weight)


def get_inputs():
    return [torch.rand(6144, 4096)]


def get_init_inputs():
    return [4096, 1024]
