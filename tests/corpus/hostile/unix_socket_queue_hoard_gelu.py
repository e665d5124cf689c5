"""Holds host memory as unread data queued on AF_UNIX stream sockets of its own: each socketpair's sender raises
SO_SNDBUF to the host's wmem_max (x2: 8 MiB here), fills it without blocking and nobody ever reads. The queued
skbs are kernel memory that no process maps (no RSS, no PSS, no memfd, nothing in /dev/shm) and that the kernel
may escape the sandbox's memory cgroup on some kernels (no memcg socket accounting for AF_UNIX). It does not on this
kernel (6.18): the skbs are charged, and the cap catches the hoard. Stops at 6 GiB (red-team safety limit).
The forward is an honest framework GELU. Prints what it queued and the host's MemAvailable to its log.
Measured (session 39, 2-core host, Linux 6.18, cgroup v1, 3 GiB limit / 4 GiB cap): memory_exceeded in stage
'load' ("the kernel killed 1 of its processes at the sandbox's memory cap of 4.00 GiB, 4.00 GiB at its peak"); host
MemAvailable 23510 -> 19188 MiB at the kill. A standalone memcg test: 512 MiB queued, memcg +522 MiB. Caught.
Problem: v3/level1/26_GELU_
Verdict: memory_exceeded
Options: needs_isolation, allow_framework, memory_limit_3gb, needs_memory_cap
"""
import socket
import sys

import torch
import torch.nn as nn

HOARD = 6 << 30
CHUNK = b"\x5a" * (1 << 20)


def _avail():
    with open("/proc/meminfo") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("MemAvailable")) >> 10


_before = _avail()
_pairs, _queued = [], 0
while _queued < HOARD:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 << 20)  # clamped to 2 x wmem_max
    a.setblocking(False)
    try:
        while _queued < HOARD:
            _queued += a.send(CHUNK[: min(len(CHUNK), HOARD - _queued)])
    except BlockingIOError:
        pass
    _pairs.append((a, b))
print(f"rt39: queued {_queued / 2**30:.2f} GiB on {len(_pairs)} socketpairs; MemAvailable {_before} -> {_avail()} MiB",
      file=sys.stderr, flush=True)


class Model(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))
