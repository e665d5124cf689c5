"""Reverse cumulative sum along dim 1 (flip, cumsum, flip back)."""
import torch
import torch.nn as nn

batch_size = 32768
input_shape = (32768,)
dim = 1


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.cumsum(x.flip(self.dim), dim=self.dim).flip(self.dim)


def get_inputs():
    x = torch.rand(batch_size, *input_shape)
    return [x]


def get_init_inputs():
    return [dim]
