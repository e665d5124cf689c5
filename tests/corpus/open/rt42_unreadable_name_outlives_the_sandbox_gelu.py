"""An honest erf GELU that leaves behind a child whose name (comm, set with prctl PR_SET_NAME) is bytes no UTF-8
decoder takes. Where the sandbox has no cgroup (the harness not root: the `process` level, and any level that could
not make one), the sandbox finds its processes by scanning every /proc/PID/status in text mode (harness/sandbox.py
`Sandbox.pids`), and the status's `Name:` line holds the raw bytes: UnicodeDecodeError, a ValueError, which the scan
`continue`s past. That process is then in no list: not in `pids()` (so not stopped while the judge times its
reference, not in the memory watcher's sum), and not killed by `kill()`'s repeated scans when grading ends; with no
PID namespace at that level it outlives the grading, under the caller's uid, for as long as it likes (here 900 s,
renaming itself to show it ran). SECURITY.md: "when grading ends every process of its uid (setsid escapees included)
and of its tree is killed". Red team, session 42 (CPU; run as an unprivileged user, `--sandbox process`).
Problem: v3/level1/26_GELU_
Verdict: ok
Options: process_level_not_root
"""
import ctypes
import math
import os
import time

import torch
import torch.nn as nn


def _leave_one_behind() -> None:
    if os.fork() != 0:
        return
    try:
        os.setsid()
        libc = ctypes.CDLL(None)
        libc.prctl(15, ctypes.c_char_p(b"\xff\xfe-kb-left"), 0, 0, 0)  # PR_SET_NAME: 15 bytes at most
        t0 = time.time()
        while time.time() - t0 < 900:
            time.sleep(1)
    finally:
        os._exit(0)


_leave_one_behind()


class Model(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))
