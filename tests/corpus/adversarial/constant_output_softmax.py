"""Returns a constant (the uniform distribution) instead of the softmax.
Problem: v3/level1/23_Softmax
Verdict: incorrect
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.full_like(x, 1.0 / x.shape[1])
