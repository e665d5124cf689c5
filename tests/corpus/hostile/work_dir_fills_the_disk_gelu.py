"""Fills its work dir (/tmp inside) with 4 GiB of data in four files and 100000 empty files, then runs an honest GELU.
The work dir was a folder of the host's root filesystem: RLIMIT_FSIZE caps one file, nothing capped the folder or its
file count, and no watcher read it (red team, session 38: `ok` 0.71x, the host's free disk down 4.1 GiB). Where the
sandbox has a memory cap, its work dir is now a tmpfs of the cap's size (a million files at most): what it writes
there is memory the cap charges and the watcher reads, `memory_exceeded` under a 3 GiB limit.
Problem: v3/level1/26_GELU_
Verdict: memory_exceeded
Options: needs_isolation, allow_framework, memory_limit_3gb, needs_memory_cap
"""
import os

import torch
import torch.nn as nn

DATA_GIB, FILES = 4, 100_000
_chunk = b"\xa5" * (64 << 20)
for k in range(DATA_GIB):
    with open(f"/tmp/fill{k}.bin", "wb") as f:
        for _ in range((1 << 30) // len(_chunk)):
            f.write(_chunk)
os.makedirs("/tmp/many", exist_ok=True)
for k in range(FILES):
    os.close(os.open(f"/tmp/many/{k}", os.O_CREAT | os.O_WRONLY, 0o600))


class Model(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))
