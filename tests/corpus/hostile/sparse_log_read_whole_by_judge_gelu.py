"""Makes its log (stdout, fd 1: a host file the judge opened for it before the drop) a sparse file of SPARSE_GIB GiB
with one ftruncate (no disk used, instant), then dies: the judge's crash path (session.Candidate._ended ->
Sandbox.log_tail) read the whole log to keep its last 2000 bytes, so the trusted judge allocated that many GiB of
zeros (248 -> 3436 MiB resident; red team, session 38): RLIMIT_FSIZE lets it reach 8 GiB a grading. The judge now
reads the tail from the end (tests/test_sandbox.py watches its memory).
Problem: v3/level1/26_GELU_
Verdict: crashed
"""
import os

import torch
import torch.nn as nn

SPARSE_GIB = 3

os.write(1, b"hello from the submission\n")
os.ftruncate(1, SPARSE_GIB << 30)  # holes: no block allocated
os._exit(3)


class Model(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))
