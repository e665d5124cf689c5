"""Leaves a TorchFunctionMode on the mode stack at import, which sleeps 20 ms in every F.gelu call: no
attribute and no dispatcher entry changes, yet the reference, timed beside this submission, looks slow.
Problem: v3/level1/26_GELU_
The reference runs in the judge's process since harness 0.2, where nothing of the submission reaches: the
attack has no effect (it was `unaffected`: ok, no inflated speedup). Since session 25 a mode left active in the
candidate's process is reported, for it sees the harness's own calls there: rejected.
Verdict: rejected [timer_tampered]
Options: allow_framework
"""
import math
import time

import torch
import torch.nn as nn
from torch.overrides import TorchFunctionMode


class _SlowGelu(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is torch.nn.functional.gelu:
            time.sleep(0.02)
        return func(*args, **(kwargs or {}))


_SlowGelu().__enter__()


class Model(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))
