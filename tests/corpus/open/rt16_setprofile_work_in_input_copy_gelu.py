"""GELU computed by a sys.setprofile hook when the candidate's harness returns from copying a call's inputs
(Server._inputs), before the timer starts: forward only hands back the finished tensor. Nothing is replaced, so
no surface check (which compares attributes and code objects) can see it, however many names it covers.
Problem: v3/level1/26_GELU_
Verdict: rejected [timer_tampered]
Device: cpu
The same class as open/rt10_work_in_input_copy_gelu (work outside the timed interval, within the CPU bound's
10 ms margin), by a mechanism that survives adding torch.Tensor.copy_ or any other name to the watched surface:
the interpreter's profile hook is process state, not an attribute. The hook fires on the return of any function
whose code is named `_inputs`; its return value is the list of work buffers the next call will get.
"""
import math
import sys

import torch
import torch.nn as nn

_done = {}


def _compute(x):
    return 0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))


def _hook(frame, event, arg):
    if event == "return" and frame.f_code.co_name == "_inputs" and isinstance(arg, list) and arg:
        x = arg[0]
        if isinstance(x, torch.Tensor) and x.is_floating_point():
            _done["key"] = (x.data_ptr(), x._version)
            _done["out"] = _compute(x)


sys.setprofile(_hook)


class Model(nn.Module):
    def forward(self, x):
        if _done.get("key") == (x.data_ptr(), x._version):
            _done["key"] = None
            return _done["out"]
        return _compute(x)
