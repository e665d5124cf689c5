"""The reference itself, submitted as the solution (graded with framework ops allowed).
Problem: v3/level1/23_Softmax
Verdict: ok
Options: allow_framework
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)
