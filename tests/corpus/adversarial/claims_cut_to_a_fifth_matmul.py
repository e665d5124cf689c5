"""The claims class on a call of about 2 ms: the honest level-2 fusion (honest/torch_fused_matmul_scale_residual's
broadcast product) whose every timed call's reported time is cut to a fifth in the candidate server's send(), its own
names stripped from the reply's tamper report. The round trip's bound on a CPU, (trusted - 10 ms) / 1.5 a call, is
negative for such a call; the forward thread's CPU clock (session 32) is 2 ms a call over a 0.4 ms claim, far past
its noise (about 0.1 ms a call), so every counted batch is under its floor whatever the grading.
Problem: v3/level2/40_Matmul_Scaling_ResidualAdd
Verdict: floored
Device: cpu
"""
import sys

import torch
import torch.nn as nn

_server = sys.modules.get("kb_data.harness" + ".candidate")
if _server is not None:
    _send = getattr(_server, "se" + "nd")

    def _cut_claims(sock, msg, fds=()):
        calls = msg.get("calls") if isinstance(msg, dict) else None
        if isinstance(calls, list) and calls and all(isinstance(c, dict) and "ms" in c for c in calls):
            for c in calls:
                c["ms"] = float(c["ms"]) / 5
        if isinstance(msg, dict) and isinstance(msg.get("tampered"), list):
            msg["tampered"] = [t for t in msg["tampered"] if "harness.candidate." not in t]
        return _send(sock, msg, fds)

    setattr(_server, "se" + "nd", _cut_claims)


class Model(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        w, b = self.matmul.weight, self.matmul.bias
        y = (x[:, None, :] * w[None, :, :]).sum(dim=2) + b
        return y * (1.0 + self.scaling_factor)
