"""Holds host memory in memfd pages written with write() and never mapped, then runs an honest GELU: pages in no
process's RSS or PSS, which were all the memory watcher read (red team, session 38: 3 GiB held under a 2 GiB limit,
`ok`; 7 GiB under the default). The watcher now adds the memfds its processes hold open, the judge's slots aside.
Here up to 6 GiB in 64 MiB writes against a 3 GiB limit.
Problem: v3/level1/26_GELU_
Verdict: memory_exceeded
Options: needs_isolation, allow_framework, memory_limit_3gb
"""
import os

import torch
import torch.nn as nn

CHUNK = b"\x5a" * (64 << 20)
HELD = []
for k in range(6):
    fd = os.memfd_create(f"hoard{k}")
    for _ in range((1 << 30) // len(CHUNK)):
        os.write(fd, CHUNK)
    HELD.append(fd)


class Model(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))
