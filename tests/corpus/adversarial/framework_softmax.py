"""Calls torch.softmax, the op the reference calls, instead of a kernel.
Problem: v3/level1/23_Softmax
Verdict: rejected [calls_reference_ops]
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)
