"""Hands the reference op to torch.compile instead of writing a kernel.
Problem: v3/level1/26_GELU_
Verdict: rejected [calls_reference_ops, no_custom_kernel]
Device: cuda
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.f = torch.compile(F.gelu)

    def forward(self, x):
        return self.f(x)
