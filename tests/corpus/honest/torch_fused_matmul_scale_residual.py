"""Level-2 fusion: the linear layer as a broadcast product plus bias, then y * s + y folded into y * (1 + s).
Problem: v3/level2/40_Matmul_Scaling_ResidualAdd
Verdict: ok
Device: cpu
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        w, b = self.matmul.weight, self.matmul.bias
        y = (x[:, None, :] * w[None, :, :]).sum(dim=2) + b
        return y * (1.0 + self.scaling_factor)
