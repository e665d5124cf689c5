"""Returns its output in a list subclass whose __iter__ computes it (with the framework's own F.gelu): the harness
turned a tuple or list of outputs into a list by iterating it after the timed interval and the profiler, so the
work was neither timed nor profiled, and the judge got a plain tensor with the right values (red team, session 16).
Problem: v3/level1/26_GELU_
Verdict: rejected [lazy_output]
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class _Deferred(list):
    def __init__(self, x, out):
        super().__init__([out])
        self._x, self._out = x, out

    def __iter__(self):
        if self._x is not None:
            self._out.copy_(F.gelu(self._x))
            self._x = None
        return super().__iter__()


class Model(nn.Module):
    def forward(self, x):
        return _Deferred(x, torch.empty_like(x))
