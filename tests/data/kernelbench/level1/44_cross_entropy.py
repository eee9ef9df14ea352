import torch
import torch.nn as nn


class Model(nn.Module):
    """Next-token loss over a vocabulary: scores divided by a temperature, then cross entropy
    against the integer ids of the true tokens."""

    def __init__(self, temperature):
        super().__init__()
        self.temperature = temperature
        self.loss = nn.CrossEntropyLoss()

    def forward(self, logits, token_ids):
        return self.loss(logits / self.temperature, token_ids)


tokens = 8192
vocabulary = 32000


def get_inputs():
    return [torch.randn(tokens, vocabulary), torch.randint(0, vocabulary, (tokens,))]


def get_init_inputs():
    return [0.7]
