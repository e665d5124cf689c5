"""Softmax by the framework's fused kernel under a name the softmax family lacks: aten::_masked_softmax, no mask set.
Problem: v3/level1/23_Softmax
Verdict: rejected [calls_reference_ops]
Device: cpu
`torch._masked_softmax(x, all-False mask, dim)` runs the framework's own fused softmax kernel (host_softmax); the
profiler records aten::_masked_softmax, which is not among the softmax family's op names (_softmax, softmax,
_log_softmax, ...). Graded ok by the exact-name matching it was written against (red team, 2026-12-02); framework ops are now
matched by their words in any framework namespace (harness/profiled.py, _families).
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch._masked_softmax(x, torch.zeros_like(x, dtype=torch.bool), 1)
