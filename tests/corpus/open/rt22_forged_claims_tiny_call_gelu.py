"""A correct Triton GELU whose timed-call replies claim 0.6 of the measured time: the candidate's channel.send is
wrapped (reached through sys.modules) after the server built each reply. OPEN on the GPU for calls this short: a
v3 GELU call is ~13 us on an H200, and the gated bound's margin (0.02 ms a call + 0.1 ms a batch of 16) is twice
that. On the H200 (2026-12-03) it was ok at 2.10x and 1.92x against ~1.1-1.2x for the honest Triton GELU; the
judge's clock stood 0.010-0.014 ms a call over the claims (p50), honest entries of that size -0.010 to +0.012.
The forged matmul of the same class (adversarial/forged_claims_modest_matmul) is caught.
Problem: v3/level1/26_GELU_
Verdict: rejected [timer_tampered]
Device: cuda
"""
import sys

import torch
import torch.nn as nn
import triton
import triton.language as tl

_ch = sys.modules.get("kb_data.harness." + "candidate")
if _ch is not None:
    _send = getattr(_ch, "se" + "nd")

    def _scaled(sock, msg, *a, **k):
        calls = msg.get("calls") if isinstance(msg, dict) else None
        if isinstance(calls, list):
            for r in calls:
                if isinstance(r, dict) and isinstance(r.get("ms"), float):
                    r["ms"] = r["ms"] * 0.6
        if isinstance(msg, dict) and isinstance(msg.get("tampered"), list):
            msg["tampered"] = [t for t in msg["tampered"] if "harness.candidate." not in t]
        return _send(sock, msg, *a, **k)

    setattr(_ch, "se" + "nd", _scaled)


@triton.jit
def gelu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476)), mask=mask)


class Model(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        gelu_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
        return y
