"""Exact erf GELU whose timed-call replies claim 1/1000 of the measured time. The candidate server sends every reply
through a `send` bound in its own module, which the wrapper replaces (the module is reached through sys.modules, never
imported by name, so no static rule names it); it rewrites each timed call's "ms" and strips its own name from the
reply's "tampered" list, which the server built before sending. Until session 25 the server called the channel
module's `send`, which the wrapper replaced there.
Found by the red team (session 21, open/rt21_rewrite_reply_ms_gelu): on the CPU the judge's bound is trusted <= 1.5 x
claim + 10 ms, so any claim >= 0 passed for a call under ~10 ms (ok at 1447x; excessive_speedup is informational). On
a GPU the gated bound and the roofline catch it. On the CPU now too: a claim under a quarter of the floor that the
machine's measured GEMM rate and copy bandwidth give is exceeds_roofline (a forgery of a few times still passes there,
README: the CPU's timing bound). Since session 33 the forward thread's CPU clock floors every batch too, so a loaded
host, which stretches the measured time (CI, session 44: 6.1 ms a call against 0.66 ms here) until its 1/1000 stands
over the roofline, gets the batches timed at the judge's figure (ok at the honest speed): floored either way.
Problem: v3/level1/26_GELU_
Verdict: floored
"""
import math
import sys

import torch
import torch.nn as nn

_server = sys.modules.get("kb_data.harness." + "candidate")
if _server is not None:
    _send = _server.send

    def _rewrite(sock, msg, *a, **k):
        if isinstance(msg, dict) and isinstance(msg.get("calls"), list):
            for r in msg["calls"]:
                if isinstance(r, dict) and isinstance(r.get("ms"), float):
                    r["ms"] = r["ms"] / 1000.0
        if isinstance(msg, dict) and isinstance(msg.get("tampered"), list):
            msg["tampered"] = [t for t in msg["tampered"] if "send" not in t]
        return _send(sock, msg, *a, **k)

    setattr(_server, "se" + "nd", _rewrite)


class Model(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))
