"""Holds host memory in memfds it sends over a socketpair to itself and never receives: the files live on in the
socket's queue (SCM_RIGHTS in flight), in no process's descriptor table, so the watcher's memfd walk cannot see them
(session 38's closing review: 6 GiB held under a 3 GiB limit, ok at 0.45x). The sandbox's memory cgroup charges
shmem to whoever wrote it: the kernel kills at the cap (the limit and 1 GiB), `memory_exceeded`.
Problem: v3/level1/26_GELU_
Verdict: memory_exceeded
Options: needs_isolation, allow_framework, memory_limit_3gb, needs_memory_cap
"""
import os
import socket

import torch
import torch.nn as nn

CHUNK = b"\x5a" * (64 << 20)
A, B = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
for k in range(6):
    fd = os.memfd_create(f"hoard{k}")
    for _ in range((1 << 30) // len(CHUNK)):
        os.write(fd, CHUNK)
    socket.send_fds(A, [b"x"], [fd])
    os.close(fd)


class Model(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))
