"""Elementwise hardtanh, clamping to [-1, 1]."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
dim = 393216


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return F.hardtanh(x, min_val=-1.0, max_val=1.0)


def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
