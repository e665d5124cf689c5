"""v0.1 ReLU that does no work on the suite's inputs (torch.rand: ReLU is the identity there): it returns the judge's
input slot that its input was copied from, found through the candidate's frames, which holds the same values and
shares no storage with forward's argument, so a check of the argument alone said nothing; a negative among 256
sampled values (the off-distribution probe) gets a real ReLU (red team, session 16: ok at 18.9-26x, honest 2.2x).
The aliasing check now covers every input slot the candidate copied from.
Problem: v0.1/level1/19_ReLU
Verdict: rejected [output_aliases_input]
Device: cpu
"""

import sys

import torch
import torch.nn as nn


def _judge_input_slot():
    """The slot this call's first input was copied from, or None (names are compared before any f_locals is read)."""
    f, c = sys._getframe(2), None
    while f is not None:
        name = f.f_code.co_name
        if name == "<lambda>" and c is None:
            c = f.f_locals.get("c")
        elif name in ("cmd_timed", "cmd_forward", "cmd_profile"):
            loc = f.f_locals
            server, msg = loc.get("self"), loc.get("msg")
            try:
                ins = msg["calls"][c]["inputs"] if name == "cmd_timed" else msg["inputs"]
                d = ins[0]["slot"]
                return server.slots[(d["name"], d.get("handle") or d.get("id"), d["dtype"], tuple(d["shape"]))]
            except Exception:
                return None
        f = f.f_back
    return None


class ModelNew(nn.Module):
    def forward(self, x):
        if not bool(x.reshape(-1)[:: max(1, x.numel() // 256)].lt(0).any()):  # the suite's distribution: torch.rand
            slot = _judge_input_slot()
            if slot is not None:
                return slot
        return torch.clamp_min(x, 0.0)
