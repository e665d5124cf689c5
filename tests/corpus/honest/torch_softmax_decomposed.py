"""Softmax written out as max-subtract, exp, sum and divide in fp32 (real work, no softmax op).
Problem: v3/level1/23_Softmax
Verdict: ok
Device: cpu
"""
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        e = (x - x.amax(dim=1, keepdim=True)).exp()
        return e / e.sum(dim=1, keepdim=True)
