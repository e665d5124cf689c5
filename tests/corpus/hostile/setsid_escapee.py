"""Starts a child in a new session at import that sleeps for ten minutes (a setsid escapee), then computes
the right GELU. Nothing it starts may outlive its grading (the test looks for the marker).
Problem: v3/level1/26_GELU_
Verdict: ok
Options: needs_isolation, allow_framework
"""
import subprocess
import sys

import torch
import torch.nn as nn

subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)  # kb-hostile-escapee"],
                 start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _gelu(x):
    return 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))


class Model(nn.Module):
    def forward(self, x):
        return _gelu(x)
