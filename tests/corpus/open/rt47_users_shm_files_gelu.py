"""At the process level graded by a user who is not root (CPU or GPU rules), reads and overwrites files of the user's
in the host's /dev/shm: Landlock gives the sandbox /dev/shm for reading and writing (semaphores, shared tensors) and
the sandbox has the user's uid, so every 0600 file of the user's there (multiprocessing.shared_memory's psm_* blocks,
torch's shared tensors of a DataLoader running beside, another grading's) is its. Computes the right GELU.
Problem: v3/level1/26_GELU_
Verdict: ok
Device: cpu (the same on cuda)
Observed (red team 47, /tmp/rt47/probe_proc.py: tests/test_sandbox_user._as_a_user, GPU rules): a 0600 file of the
user's, /dev/shm/psm_rt47_*, "user shm read": "user-secret-in-shm", and after the grading it read "TAMPEREDret-in-shm".
Expected once fixed: ok, the files listed but neither read nor written (a /dev/shm of the sandbox's own: a tmpfs
mounted by an unprivileged user namespace where allowed, or Landlock write/read rights on /dev/shm limited to files
the sandbox made, e.g. a per-sandbox subfolder with torch/multiprocessing pointed at it).
"""
import math
import os

import torch
import torch.nn as nn

_seen = {}
for _name in os.listdir("/dev/shm"):
    _p = os.path.join("/dev/shm", _name)
    try:
        if os.stat(_p).st_uid == os.getuid() and os.path.isfile(_p):
            with open(_p, "rb") as f:
                _seen[_name] = f.read(32)
    except OSError:
        pass
print(f"rt47: the user's files in /dev/shm read: {_seen}", flush=True)


class Model(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))
