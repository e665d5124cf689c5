"""Computes the GELU in float64 and returns it as float64 (more precise, and another dtype than the reference's).
Problem: v3/level1/26_GELU_
Verdict: incorrect
"""
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x):
        return F.gelu(x.double())
