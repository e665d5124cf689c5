"""The reference LayerNorm under torch.compile(mode="reduce-overhead"), submitted with framework ops allowed: the
baseline's own compiled form. Its outputs are CUDA-graph buffers that its next call overwrites, and on this problem
the paired baseline is compiled too, in the same process.
Problem: v3/level1/40_LayerNorm
Verdict: ok
Device: cuda
Options: allow_framework
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)
        self._forward = torch.compile(self.ln.forward, mode="reduce-overhead")  # a function: no extra state-dict keys

    def forward(self, x):
        return self._forward(x)
