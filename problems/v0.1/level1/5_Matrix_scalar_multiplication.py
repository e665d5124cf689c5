"""Multiply a matrix by a Python float scalar."""
import torch
import torch.nn as nn

M = 65536
N = 16384

QUIRKS = ["scalar_input"]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, s):
        return A * s


def get_inputs():
    A = torch.rand(M, N)
    s = 3.14  # a plain Python float, passed through unchanged
    return [A, s]


def get_init_inputs():
    return []
