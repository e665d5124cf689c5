"""Computes the right GELU, and at import opens pseudo-terminals until refused (up to 5000), holding them for its whole
grading: the host's ptys (4096 in all, shared with its terminals and every other sandbox) must not be its to use up.
The strong sandbox gives it a devpts instance of its own with a few (the test counts the host's ptys meanwhile).
Problem: v3/level1/26_GELU_
Verdict: ok
Options: needs_isolation, allow_framework
"""
import os

import torch
import torch.nn as nn

HELD = []
for _ in range(5000):
    try:
        HELD.append(os.open("/dev/ptmx", os.O_RDWR | os.O_NOCTTY))
    except OSError:
        break


class Model(nn.Module):
    def forward(self, x):
        return torch.nn.functional.gelu(x)
