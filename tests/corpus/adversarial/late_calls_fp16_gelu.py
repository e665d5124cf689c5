"""Counts its calls: exact float32 for the first 60 (correctness, the checks and the rule's 5 + 30 timed calls) and
float16 from then on. On a GPU a short kernel's paired loop runs on to 400 ms (up to 2000 calls), so most of its
timed calls, and its median, are float16; the float64 comparison must keep riding in those late calls too.
Problem: v3/level1/26_GELU_
Verdict: rejected [precision_downgrade]
Device: cuda
Options: allow_framework
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        if self.calls > 60:
            x = x.half()
        return (0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))).float()
