"""GELU that does the whole batch's work in the batch's first timed call and returns stored outputs in the rest.
Problem: v3/level1/26_GELU_
Verdict: unaffected
Verdict on a GPU: rejected [exceeds_roofline]
Options: allow_framework
The judge sends up to 16 timed calls in one message, so the candidate's process holds every call's inputs before
the first is timed. The first call of a batch computes all of them; the others hand back what it stored. Every
output is right, and the batch's mean claim equals the truth (the timing bound holds it against the round trip),
but the median of the per-call claims, the record's time and its paired speedup, is the near-zero of the cached
calls (26x, where the same GELU done honestly got 1.6x). Its GELU is torch's: graded with framework ops
allowed, so that on a GPU too the verdict turns on the timing alone. Now each batch is one sample of the record's times (the
mean of its calls, what the round trip bounds), so moving work between a batch's calls gains nothing. On a GPU the
roofline, held to each call's raw claim since session 26, also rejects it: 0.0017 ms claimed for a call that moves
32 MB (the H200, session 28).
"""
import math
import sys

import torch
import torch.nn as nn

_store: dict = {}


def _batch():
    """The running batch's calls, this process's slots and the index of the call running now, from the candidate
    server's frames."""
    f, k = sys._getframe(1), None
    while f is not None:
        if f.f_code.co_name == "cmd_timed":
            return f.f_locals.get("self"), f.f_locals.get("msg"), k
        if k is None and isinstance(f.f_locals.get("c"), int):  # the closure of the batch's call being timed
            k = f.f_locals["c"]
        f = f.f_back
    return None, None, None


def _gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


class Model(nn.Module):
    def forward(self, x):
        server, msg, k = _batch()
        if server is None or k is None:
            return _gelu(x)
        calls = msg["calls"]
        if k == 0:
            ch = sys.modules["kb_data.harness.channel"]
            _store.clear()
            for j, c in enumerate(calls[1:], 1):
                src = ch.open_slot(ch.SlotDesc.from_msg(c["inputs"][0]["slot"]), server.slots, server.received)
                _store[j] = _gelu(src.clone())
            return _gelu(x)
        return _store.pop(k, None) if k in _store else _gelu(x)
