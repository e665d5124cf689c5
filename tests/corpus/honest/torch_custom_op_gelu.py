"""Exact GELU registered as a custom operator of its own namespace (torch.library.custom_op) with a fake
kernel for tracing: new operators are not the reference's, so the dispatcher-table check leaves them alone.
Problem: v3/level1/26_GELU_
Verdict: ok
Device: cpu
"""
import math

import torch
import torch.nn as nn


@torch.library.custom_op("kb_corpus_honest::gelu_erf", mutates_args=())
def gelu_erf(x: torch.Tensor) -> torch.Tensor:
    return 0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))


@gelu_erf.register_fake
def _(x):
    return torch.empty_like(x)


class Model(nn.Module):
    def forward(self, x):
        return gelu_erf(x)
