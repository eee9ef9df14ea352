import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """Linear layer (8192 to 8192) on a batch of 4096, then Mish twice."""

    def __init__(self, in_features, out_features):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x):
        y = self.fc(x)
        y = F.mish(y)
        return F.mish(y)


def get_inputs():
    return [torch.randn(4096, 8192)]


def get_init_inputs():
    return [8192, 8192]
