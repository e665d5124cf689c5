"""Honest GELU whose import writes 5 GiB to its stdout, which is the harness's log beside its work dir. The log was a
file of the host's disk, which the watcher never read and only RLIMIT_FSIZE (8 GiB a file) bounded (red team, session
39: 1 GiB written, `ok` 0.41x against 0.53x for the control). Where the sandbox has a memory cap, the folder that holds
its work dir and its log is now a tmpfs of the cap's size: the log is memory the cap charges and the watcher reads,
`memory_exceeded` under a 3 GiB limit.
Problem: v3/level1/26_GELU_
Verdict: memory_exceeded
Options: needs_isolation, allow_framework, memory_limit_3gb, needs_memory_cap
"""
import os

import torch
import torch.nn as nn

HOG_MIB = 5 * 1024
chunk = os.urandom(1 << 20) * 8
for _ in range(HOG_MIB // 8):
    os.write(1, chunk)


class Model(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))
