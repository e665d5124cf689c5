"""Signals everything it can reach in forward: every process it may signal (kill -1), its parent, PID 1, then
exits. It can end only itself: the judge, the grading parent and the next job go on.
Problem: v3/level1/26_GELU_
Verdict: crashed
"""
import os
import signal

import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        for pid in (-1, os.getppid(), 1):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        os._exit(0)
