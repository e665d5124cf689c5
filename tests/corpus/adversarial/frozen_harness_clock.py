"""GELU by its erf formula, with the candidate's own timer clock stopped: every timed call claims 0 ms.
Problem: v3/level1/26_GELU_
Verdict: rejected [timer_tampered]
Device: cpu
The limit of rt_slow_harness_clock: a clock that never moves. Every claim is 0, which the judge's clock contradicts
(timer_tampered); no ratio the judge keeps as evidence may divide by it (a claimed median of 0 once made the judge
itself fail with a ZeroDivisionError, which would have ended the record as a runtime_error, not a rejection).
"""
import math
import sys

import torch
import torch.nn as nn

_t = sys.modules.get("kb_data.harness.timing")
if _t is not None:
    setattr(_t, "_perf_" + "counter", lambda: 1000.0)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))
