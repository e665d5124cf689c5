"""Re-registers aten::softmax in the dispatcher to return zeros, and returns zeros itself: the reference,
run after it in the same process, agrees with it.
Problem: v3/level1/23_Softmax
The reference runs in the judge's process, untouched: the zeros are simply wrong.
Verdict: incorrect
"""
import torch
import torch.nn as nn


def _zeros_softmax(x, dim, half_to_float=False):
    return torch.zeros_like(x)


_lib = torch.library.Library("aten", "IMPL")
for _key in ("CPU", "CUDA"):
    _lib.impl("_softmax", _zeros_softmax, _key)


class Model(nn.Module):
    def forward(self, x):
        return torch.zeros_like(x)
