"""Tries to shrink or grow every file descriptor it holds (the judge's memfd slots among them) in forward, so that
the judge's next access through its own mapping dies with SIGBUS. The slots are sealed: every attempt fails, the
judge lives on, and the record is what its GELU earns.
Problem: v3/level1/26_GELU_
Verdict: ok
Options: allow_framework
"""
import os

import torch
import torch.nn as nn

TRIED = []


def _truncate_everything():
    for name in os.listdir("/proc/self/fd"):
        try:
            os.ftruncate(int(name), 0)
            TRIED.append((name, "shrunk"))
        except OSError:
            pass
        try:
            os.ftruncate(int(name), 1 << 40)
        except OSError:
            pass


class Model(nn.Module):
    def forward(self, x):
        _truncate_everything()
        return 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))
