"""GELU by the framework's own kernel in place: aten::gelu_ is not among the activation family's op names.
Problem: v3/level1/26_GELU_
Verdict: rejected [calls_reference_ops]
Device: cpu
The family lists `gelu` and the profiler's names are matched exactly, so the in-place variant (the same fused
framework kernel) is not seen. Graded ok by the exact-name matching it was written against (red team, 2026-12-02); framework ops are now
matched by their words in any framework namespace (harness/profiled.py, _families).
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.ops.aten.gelu_(x.clone())
