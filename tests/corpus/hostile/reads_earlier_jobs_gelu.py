"""Looks through its own process for what earlier jobs of its judge left behind: any live dict holding a
submission's code other than its own. A judge that stays up across one problem's submissions forks every candidate
from one spawner; forked inside the judge's first job, that spawner held the job, and so did every later candidate.
Problem: v3/level1/26_GELU_
Verdict: ok
Device: cpu
Found, the model refuses to build and names what it found (compile_error). Graded alone or after other jobs of its
problem (tests/test_anticheat.py, the resident batch), it must find nothing.
"""
import gc
import math

import torch
import torch.nn as nn


def _earlier_submissions(mine: str) -> list:
    gc.unfreeze()  # objects frozen out of collection are hidden from get_objects until then
    found = []
    for o in gc.get_objects():
        if type(o) is dict and type(o.get("submission_code")) is str and o["submission_code"] != mine:
            found.append(o["submission_code"][:80])
    return found


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        with open(__file__, encoding="utf-8") as f:
            found = _earlier_submissions(f.read())
        if found:
            raise RuntimeError(f"another job's submission is in this process: {found[0]!r}")

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))
