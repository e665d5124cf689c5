"""Holds host memory in System V shared memory segments it fills, detaches and never removes: a detached segment is in
no process's RSS, PSS or descriptor table, and lives on as long as the sandbox's IPC namespace (or, without one, the
host's). The sandbox's memory cgroup charges each page to the process that touched it first: the kernel kills at the
cap (the limit and 1 GiB), `memory_exceeded`. 6 GiB in 1 GiB segments against a 3 GiB limit.
Problem: v3/level1/26_GELU_
Verdict: memory_exceeded
Options: needs_isolation, allow_framework, memory_limit_3gb, needs_memory_cap
"""
import ctypes
import ctypes.util

import torch
import torch.nn as nn

IPC_PRIVATE, IPC_CREAT = 0, 0o1000
libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
libc.shmat.restype = ctypes.c_void_p
libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
libc.shmdt.argtypes = [ctypes.c_void_p]
for _ in range(6):
    seg = libc.shmget(IPC_PRIVATE, ctypes.c_size_t(1 << 30), IPC_CREAT | 0o600)
    if seg < 0:
        raise OSError(ctypes.get_errno(), "shmget")
    addr = libc.shmat(seg, None, 0)
    ctypes.memset(addr, 0x5A, 1 << 30)
    libc.shmdt(addr)


class Model(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))
