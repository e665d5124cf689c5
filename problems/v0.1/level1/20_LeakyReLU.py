"""Elementwise LeakyReLU with negative slope 0.01."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
dim = 393216


class Model(nn.Module):
    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x):
        return F.leaky_relu(x, negative_slope=self.negative_slope)


def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
