"""Exclusive cumulative sum along dim 1 (a zero column, then the cumsum of all but the last)."""
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
        exclusive = torch.cumsum(x.narrow(self.dim, 0, x.size(self.dim) - 1), dim=self.dim)
        zeros = torch.zeros_like(x.select(self.dim, 0).unsqueeze(self.dim))
        return torch.cat([zeros, exclusive], dim=self.dim)


def get_inputs():
    x = torch.rand(batch_size, *input_shape)
    return [x]


def get_init_inputs():
    return [dim]
