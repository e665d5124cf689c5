"""The reference LayerNorm itself, submitted as the solution (graded with framework ops allowed).
Problem: v3/level1/40_LayerNorm
Verdict: ok
Options: allow_framework
"""
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x):
        return self.ln(x)
