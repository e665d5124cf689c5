"""Elementwise ELU with alpha 1.0."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
dim = 393216


class Model(nn.Module):
    def __init__(self, alpha: float = 1.0):
        super().__init__()
        self.alpha = alpha

    def forward(self, x):
        return F.elu(x, alpha=self.alpha)


def get_inputs():
    x = torch.rand(batch_size, dim)
    return [x]


def get_init_inputs():
    return [1.0]
