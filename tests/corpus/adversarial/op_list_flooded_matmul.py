"""The square matmul by torch.matmul, each call first opening 2100 empty record-function ranges named `a::t00000`...,
which sort before `aten::` and filled the profile's op list up to the 2000 names it carried, so the framework's
names were cut (red team, session 25, fourth pass: ok at 0.37-0.47x; LayerNorm 1.00x against 0.23x, MiniGPT 0.52x against 0.09x). A list that
reaches the names the judge reads now fails the profile.
Problem: v3/level1/1_Square_matrix_multiplication_
Verdict: rejected [check_failed]
Device: cpu
"""
import torch
import torch.nn as nn
from torch._C._profiler import _RecordFunctionFast

_TAGS = [f"a::t{k:05d}" for k in range(2100)]


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        for tag in _TAGS:
            with _RecordFunctionFast(tag):
                pass
        return torch.matmul(A, B)
