"""Allocates 12 GiB of host memory at construction (a GELU needs none of it).
Problem: v3/level1/26_GELU_
Verdict: memory_exceeded
Options: needs_isolation, allow_framework, memory_limit_3gb
"""
import torch
import torch.nn as nn


def _gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.hoard = [torch.ones(1 << 28) for _ in range(12)]  # 12 x 1 GiB, each page written

    def forward(self, x):
        return _gelu(x)
