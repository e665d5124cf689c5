"""Moves a mapping over an address it chooses (mremap with MREMAP_FIXED, and with MREMAP_DONTUNMAP), which, unlike a
new mapping, leaves no record in the judge's CPU sampler: code moved over a range after it ran would put its samples
in the name of whatever is moved there next (the red team's decoy, session 42, mapped with mmap, which the sampler now
records). Both must be refused with EPERM by a CPU grading's seccomp filter, and a plain move (MREMAP_MAYMOVE, which
realloc uses) must still work; otherwise the GELU it returns is wrong on purpose. (Builds and GPU gradings allow them.)
Problem: v3/level1/26_GELU_
Verdict: ok
Device: cpu
Options: allow_framework
"""
import ctypes
import errno
import mmap

import torch
import torch.nn as nn

_MAYMOVE, _FIXED, _DONTUNMAP = 1, 2, 4


def _wrong() -> list[str]:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mmap.restype = libc.mremap.restype = ctypes.c_void_p
    libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
    libc.mremap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
    page = mmap.PAGESIZE
    a, b = (libc.mmap(None, page, 3, 0x22, -1, 0) for _ in range(2))  # PROT_READ|WRITE, MAP_PRIVATE|ANONYMOUS
    wrong = []
    for name, flags in (("MREMAP_FIXED", _MAYMOVE | _FIXED), ("MREMAP_DONTUNMAP", _MAYMOVE | _DONTUNMAP)):
        ctypes.set_errno(0)
        got = libc.mremap(a, page, page, flags, b)
        if got != ctypes.c_void_p(-1).value or ctypes.get_errno() != errno.EPERM:
            wrong.append(name)
    if libc.mremap(a, page, 64 * page, _MAYMOVE, None) == ctypes.c_void_p(-1).value:
        wrong.append("MREMAP_MAYMOVE refused")
    return wrong


WRONG = _wrong()


class ModelNew(nn.Module):
    def forward(self, x):
        y = 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))
        return y + 1.0 if WRONG else y
