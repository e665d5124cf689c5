"""LayerNorm over the last three dims (64, 256, 256)."""
import torch
import torch.nn as nn

batch_size = 4
features = 8
dim1 = 32
dim2 = 32


class Model(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    x = torch.rand(batch_size, features, dim1, dim2)
    return [x]


def get_init_inputs():
    return [(features, dim1, dim2)]
