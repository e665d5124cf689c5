"""Exact GELU from its erf formula in fp32.
Problem: v3/level1/26_GELU_
Verdict: ok
Device: cpu
"""
import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))
