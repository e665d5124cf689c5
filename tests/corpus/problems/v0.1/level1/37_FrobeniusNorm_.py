"""Divide a tensor by its global Frobenius norm."""
import torch
import torch.nn as nn

batch_size = 4
features = 8
dim1 = 64
dim2 = 64

# The norm over ~1.9e9 uniform values is ~2.5e4, so every output is below ~4e-5: under the
# v0.1 tolerance (atol 1e-2) the output is indistinguishable from zero.
QUIRKS = ["constant_output"]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        norm = torch.norm(x, p="fro")
        return x / norm


def get_inputs():
    x = torch.rand(batch_size, features, dim1, dim2)
    return [x]


def get_init_inputs():
    return []
