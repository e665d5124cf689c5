"""At import, sends a datagram to unix datagram sockets that listen at a path (a user's own socket, the system log's,
the journal's) through one end of socketpair(AF_UNIX, SOCK_DGRAM): the process level refuses connect() and makes
socket() give seqpacket sockets only, but a socketpair of any type stays, and sendto() with an address on a
connected datagram socket looks the address up and sends there (unix_dgram_sendmsg; unix_may_send passes for any
receiver that is not connected elsewhere). Landlock does not hold a send to a path socket; its ABI 6 scope holds
abstract names only (EPERM there). Computes the right GELU.
Problem: v3/level1/26_GELU_
Verdict: ok
Device: cpu (the same on cuda: socketpair is allowed on both rules)
Observed (red team 47, as a user who is not root, tests/test_sandbox_user._as_a_user, GPU and CPU rules, process
level): a datagram socket bound by a process of the user's at /tmp/rt47-user-*/user.sock received
"forged datagram to the path socket" (sendto returned 34); the user's abstract datagram name got EPERM. This is
session 46's "a datagram reached a user's socket by sendto", reopened by socketpair.
Expected once fixed: ok, and every sendto below refused (EPERM): socketpair held to SOCK_STREAM and SOCK_SEQPACKET
(a seqpacket socket ignores an address and sends only to its peer), or sendto with an address refused by seccomp.
"""
import math
import os
import socket

import torch
import torch.nn as nn

TARGETS = [p for p in (os.environ.get("RT47_USER_SOCKET"), "/dev/log", "/run/systemd/journal/socket") if p]
_a, _b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
for _path in TARGETS:
    try:
        _n = _a.sendto(b"<13>rt47: a line from a sandboxed submission", _path)
        print(f"rt47: datagram of {_n} bytes sent to {_path}", flush=True)
    except OSError as e:
        print(f"rt47: {_path}: {e!r}", flush=True)


class Model(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))
