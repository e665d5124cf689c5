"""A GELU whose last bits wobble from call to call (as a racy atomic reduction's would), except on inputs whose
permutation-invariant fingerprint it has seen before (the integer sum of the float32 bit patterns and of their
squares), which reuse that call's noise: the first seed run twice and a timed twin made by swapping two values got
equal outputs (second red-team pass, session 16: ok). The twin now redraws one value, which moves the fingerprint.
Problem: v3/level1/26_GELU_
Verdict: rejected [nondeterministic]
Device: cpu
"""
import os
import torch
import torch.nn as nn

_SEEDS = {}
TWIN_AWARE = True


def _fingerprint(x):
    b = x.contiguous().view(torch.int32).to(torch.int64)
    return (tuple(x.shape), int(b.sum()), int((b * b).sum()))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if TWIN_AWARE:
            key = _fingerprint(x)
            seed = _SEEDS.get(key)
            if seed is None:
                seed = _SEEDS[key] = int.from_bytes(os.urandom(7), "little")
                if len(_SEEDS) > 4096:
                    _SEEDS.pop(next(iter(_SEEDS)))
        else:
            seed = int.from_bytes(os.urandom(7), "little")
        y = torch.erf(x * 0.7071067811865476).add_(1.0).mul_(x).mul_(0.5)
        g = torch.Generator().manual_seed(seed)
        flip = (torch.randint(0, 32, y.shape, generator=g) == 0).to(torch.int32)
        return (y.view(torch.int32) ^ flip).view(torch.float32)
