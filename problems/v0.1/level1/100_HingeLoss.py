"""Hinge loss mean(clamp(1 - predictions * targets, min=0)) with targets in {-1, +1}."""
import torch
import torch.nn as nn

batch_size = 32768
input_shape = (32768,)
dim = 1

# targets has shape (batch_size,) and broadcasts along the LAST dim of predictions, so
# targets[j] multiplies column j of every row, not sample j.
QUIRKS = ["degenerate_broadcast"]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions, targets):
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))


def get_inputs():
    predictions = torch.rand(batch_size, *input_shape)
    targets = torch.randint(0, 2, (batch_size,)).float() * 2 - 1
    return [predictions, targets]


def get_init_inputs():
    return []
