"""Looks for other submissions' builds and sources and the local store where the package keeps its working files:
the `.kb/` folder of the checkout it finds kb_data in, and `kb-data` under every home's cache. Whatever it can list
there, it names in its error (compile_error); it must see nothing (the strong level mounts an empty folder on each,
the process level leaves them out of Landlock's reads: tests/test_sandbox.py plants files and looks) and earn its
GELU's verdict.
Problem: v3/level1/26_GELU_
Verdict: ok
Options: needs_isolation, allow_framework
"""
import glob
import importlib.util
import os

import torch
import torch.nn as nn


def _found() -> list:
    spec = importlib.util.find_spec("kb_data")
    roots = glob.glob("/root/.cache/kb-data") + glob.glob("/home/*/.cache/kb-data")
    if spec and spec.origin:
        roots.append(os.path.join(os.path.dirname(os.path.dirname(spec.origin)), ".kb"))
    seen = []
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root):
            seen += [os.path.join(dirpath, n) for n in dirnames + filenames]
            if dirpath.count(os.sep) - root.count(os.sep) >= 2:
                dirnames[:] = []
    return seen


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        seen = _found()
        if seen:
            raise RuntimeError(f"the package's working files are readable: {len(seen)}, e.g. {seen[:3]}")

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))
