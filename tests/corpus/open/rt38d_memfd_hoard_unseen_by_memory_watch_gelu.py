"""Holds host memory in unmapped memfd pages (written with write(), never mmapped) at import, then runs an honest GELU.
The memory watcher sums RSS (then PSS) of the sandbox's processes, which count only mapped pages, so these gigabytes
are charged to no process it reads: a submission can take all of the host's RAM (no swap here) and never be
`memory_exceeded`; the cgroup has no memory.max either. Here 3 GiB against a 2 GiB limit (probe run with
memory_limit_gb=2); 8 GiB memfds x 4096 descriptors x 512 processes is the real reach.
Problem: v3/level1/26_GELU_
Verdict: memory_exceeded
Options: needs_isolation, allow_framework, memory_limit_2gb
"""
import os

import torch
import torch.nn as nn

HOARD_GIB = 3
CHUNK = b"\x5a" * (64 << 20)
_FDS = []


def _hoard(gib: int) -> None:
    for k in range(gib):
        fd = os.memfd_create(f"hoard{k}")
        for _ in range((1 << 30) // len(CHUNK)):
            os.write(fd, CHUNK)  # pages of the memfd's shmem, never mapped: in no process's RSS or PSS
        _FDS.append(fd)


_hoard(HOARD_GIB)


class Model(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))
