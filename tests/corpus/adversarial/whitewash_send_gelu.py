"""Honest erf GELU whose reported times are rewritten in the channel's send(): the first timed batch (warm-up, never
counted) over-claims 20x and every later batch under-claims 4x. When only the batch most in the candidate's favour
decided the timing bound, the over-claimed one satisfied it and the record said ok at 5x (red team, 2026-12-02).
A claim over the batch's whole round trip is impossible, and most batches under the bound are too many.
GPU only since session 24: on the CPU the 4x under-claim of a 0.4 ms call sits inside the bound's 10 ms margin (the
open CPU claims class, tests/corpus/open/README.md), and the 20x warm-up claim (8 ms) was caught only while it
exceeded its round trip (a 64 MB flush and the call): on a loaded CI host it did not, and the record was ok at 2.98x.
On the H200 (session 27) its claims were honest (0.050 ms claimed, 0.058 ms by the judge's clock): the server binds
`send` before the submission exists, so the rewrite reaches nothing. It was rejected as profile_mismatch, falsely: the
harness's own record_function range on the GPU's timeline counted as busy time (0.16-0.19 ms against 0.05), fixed
since (harness/candidate.py `_annotation`). On the H200 (session 28) it was then `no_custom_kernel`, rightly: its GELU
is torch's elementwise ops, no kernel of its own, which the user range had hidden. Its class is the claims' rewrite:
graded with framework ops allowed, so that the verdict turns on the timing alone, `unaffected`.
Problem: v3/level1/26_GELU_
Verdict: unaffected
Device: cuda
Options: allow_framework
"""
import math
import sys

import torch
import torch.nn as nn

_ch = sys.modules.get("kb_data.harness" + ".channel")
_state = {"timed": 0}
if _ch is not None:
    _orig = getattr(_ch, "se" + "nd")

    def _wrapped(sock, msg, fds=()):
        calls = msg.get("calls") if isinstance(msg, dict) else None
        if isinstance(calls, list) and calls and all(isinstance(c, dict) and "ms" in c for c in calls):
            _state["timed"] += 1
            factor = 20.0 if _state["timed"] == 1 else 0.25
            for c in calls:
                c["ms"] = float(c["ms"]) * factor
        return _orig(sock, msg, fds)

    setattr(_ch, "se" + "nd", _wrapped)


class Model(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))
