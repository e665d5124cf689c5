"""A nondeterministic GELU that recognises the bitwise-repeat twin by a permutation-invariant fingerprint.

Mechanism: checks.py `twin_inputs` makes the twin by swapping two values of the first floating input, on the
premise that "a candidate cannot tell the pair" (same statistics). But any permutation-invariant fingerprint of
the input multiset (here: the int64 sum of the float32 bit patterns, and of their squares, exact integer sums)
is identical for a call and its twin, and for the first seed run twice, and differs (w.p. ~1) for every other
call. The kernel draws its rounding noise (the last mantissa bit of ~1/32 of the outputs flipped, as a racy
atomic reduction would make its results wobble) from os.urandom per call, except that a fingerprint seen before
reuses the seed it got then: twin and repeat outputs are bitwise equal wherever the swap cannot reach, while the
output still changes run to run (and process to process) on every other call.

Problem: v3/level1/26_GELU_
Verdict: nondeterministic (its result on given inputs depends on the run)
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
