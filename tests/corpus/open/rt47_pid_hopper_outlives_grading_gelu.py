"""At import, starts four pid hoppers: each forks and lets its parent exit at once, so its pid changes every few
hundred microseconds. Where the sandbox has no uid and no cgroup of its own (the process level, graded by a user who
is not root), the harness finds its processes by a /proc scan of the tree under its first process, then signals each
pid found: (1) a pause (SIGSTOP to each pid found, session._paused) lands on a pid that has already exited, so the
hoppers run on while the judge times its reference; (2) at the end, Sandbox.kill() SIGKILLs the first process (the
child subreaper) in the same pass as the rest; a hop made after it died is reparented to PID 1, out of the tree the
next scan walks, and lives on. Each hopper stops by itself after 60 s here. Computes the right GELU.
Problem: v3/level1/26_GELU_
Verdict: ok
Device: cpu (the same on cuda: nothing here is device-specific)
Observed (red team 47, /tmp/rt47/hop.py: tests/test_sandbox_user._as_a_user, GPU rules, four hoppers): during three
emulated pauses (every pid sb.pids() found SIGSTOPped for 0.5 s) the hoppers made 176, 177, 167 hops (one hopper with
work between hops) and 55-64 hops (four without): 2-3 pids stopped, never a hopper. After Sandbox.close() returned, the
hoppers went on in 2 of 3 runs (37 and 32 hops in the next 0.5 s), reparented to PID 1, uid of the user.
Expected once fixed: ok, nothing of the uid's left after the grading and no hop during a pause (a freezer cgroup
the user can make, e.g. a systemd --user scope with a delegated cgroup; or PR_SET_CHILD_SUBREAPER kept alive until
the rest is gone: kill the tree first, the first process last, and re-scan until it reaps nothing; or a PID namespace
from an unprivileged user namespace where the kernel allows it).
"""
import math
import os
import time

import torch
import torch.nn as nn

HOPPERS, LIFE_S = 4, 60


def _hop(deadline):
    try:
        while time.monotonic() < deadline:
            if os.fork():
                os._exit(0)
        with open(f"/dev/shm/rt47_hopper_{os.getuid()}", "a") as f:  # only reached where nothing killed it
            f.write(f"hopper alive {LIFE_S} s after it started, ppid {os.getppid()}\n")
    finally:
        os._exit(0)


for _ in range(HOPPERS):
    if os.fork() == 0:
        _hop(time.monotonic() + LIFE_S)


class Model(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))
