"""Honest erf GELU whose import forks four processes that spin, each sending SIGCONT to its process group as fast as
it can: a stop made by signals is taken back by a SIGCONT from any process that has not acted on its own stop yet
(its own pending stop is discarded with the others'), so the judge's pause of the sandbox, where it has no cgroup to
freeze (a process sandbox of a user who is not root), left them spinning beside the reference's timed calls in 1 in
6 to 1 in 30 of the pauses it had been told of (session 48). The first process now tells of a stop only once it has
seen every process of its tree stopped. A cgroup's freeze takes no signal; the spinners' CPU beside the profiled call
is work the profile cannot see.
Problem: v3/level1/26_GELU_
Verdict: rejected [check_failed]
Device: cpu
Options: needs_cgroup
"""
import math
import os
import signal

import torch
import torch.nn as nn

_parent = os.getpid()
for _ in range(4):
    if os.fork() == 0:
        while os.getppid() == _parent:  # until the candidate ends
            os.kill(0, signal.SIGCONT)
        os._exit(0)


class Model(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))
