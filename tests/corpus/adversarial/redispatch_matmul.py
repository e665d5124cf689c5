"""The square matmul by aten::mm through OpOverload.redispatch with an explicit CPU key set: that path runs no record
function, so the profiler sees no op (red team, session 25: ok at 0.88x, honest 0.08x). Caught by its source.
Problem: v3/level1/1_Square_matrix_multiplication_
Verdict: rejected [profile_mismatch]
Device: cpu
"""
import torch
import torch.nn as nn

_KS = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)
_mm = torch.ops.aten.mm.default


class ModelNew(nn.Module):
    def forward(self, A, B):
        return _mm.redispatch(_KS, A, B)
