"""The reference's own matmul (graded with framework ops allowed, so that only the times are at stake) whose
timed-call replies claim 0.75 of the measured time, rewritten in the candidate's channel.send after each reply was
built. A 2048 x 2048 GEMM call is under a millisecond on an H100-class GPU: the old bound (1.5x the claim plus 1 ms
a call) let any such claim through: the identity was ok at 1.36x on the H200 (2026-12-03). The judge's clock has to hold the claims to
what ran.
The server's own module is patched (its `send` and `recv`, bound there since session 25), and the wrapper strips
its own names from the reply's tamper report, so that the judge's clocks are what is tested.
Problem: v3/level1/1_Square_matrix_multiplication_
Verdict: rejected [timer_tampered]
Device: cuda
Options: allow_framework
"""
import sys

import torch
import torch.nn as nn

_ch = sys.modules.get("kb_data.harness." + "candidate")
if _ch is not None:
    _send = getattr(_ch, "se" + "nd")

    def _scaled(sock, msg, *a, **k):
        calls = msg.get("calls") if isinstance(msg, dict) else None
        if isinstance(calls, list):
            for r in calls:
                if isinstance(r, dict) and isinstance(r.get("ms"), float):
                    r["ms"] = r["ms"] * 0.75
        if isinstance(msg, dict) and isinstance(msg.get("tampered"), list):
            msg["tampered"] = [t for t in msg["tampered"] if "harness.candidate." not in t]
        return _send(sock, msg, *a, **k)

    setattr(_ch, "se" + "nd", _scaled)


class Model(nn.Module):
    def forward(self, A, B):
        return torch.matmul(A, B)
