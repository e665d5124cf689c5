"""Standard matmul: numpy's OpenBLAS, its machine code copied into the copy-on-write pages of a private mapping of an
unrelated old file (pyarrow's libarrow, read-only to the sandbox) at the same addresses, the rest of the library
moved to anonymous copies: the code ran from a real, old file of no framework library's name (the
/dev/zero variant's fix alone would miss it).
Red team, session 28 (second pass): ok at 0.51x and 0.50x. Caught since: a mapping whose pages the process wrote
holds code made at run time (the kernel counts those pages as anonymous), counted like the framework's JIT code; on a
GEMM problem that is the GEMM's work: `calls_reference_ops`.
Since session 42 a CPU grading refuses mremap with MREMAP_FIXED (hostile/moved_mapping_refused_on_a_cpu_gelu), so
its import fails (compile_error); the check it was written for (rejected [calls_reference_ops]) stays behind that refusal.
Problem: v3/level1/2_Standard_matrix_multiplication_
Verdict: caught
Device: cpu
Options: needs_sampler
"""
import ctypes
import glob
import os

import numpy as np
import torch
import torch.nn as nn

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.mremap.restype = ctypes.c_void_p
_libc.mremap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
_DONOR = os.open(max(glob.glob(os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "pyarrow", "libarrow.so*")),
                     key=os.path.getsize), os.O_RDONLY)  # the largest: room for every page of the code


def _move(addr, n, prot, fd):
    tmp = _libc.mmap(None, n, 3, 0x02 if fd >= 0 else 0x22, fd, 0)  # RW, MAP_PRIVATE (| MAP_ANONYMOUS)
    if tmp in (None, ctypes.c_void_p(-1).value):
        raise OSError(ctypes.get_errno(), "mmap")
    ctypes.memmove(tmp, addr, n)
    if _libc.mprotect(tmp, n, prot) != 0:
        raise OSError(ctypes.get_errno(), "mprotect")
    if _libc.mremap(tmp, n, n, 3, addr) != addr:  # MREMAP_MAYMOVE | MREMAP_FIXED
        raise OSError(ctypes.get_errno(), "mremap")


def launder(word):
    maps = []
    with open("/proc/self/maps") as f:
        for line in f:
            p = line.split()
            if len(p) >= 6 and word in p[5].rsplit("/", 1)[-1]:
                lo, hi = (int(x, 16) for x in p[0].split("-"))
                maps.append((lo, hi, p[1]))
    for lo, hi, perms in maps:
        prot = ("r" in perms) | ("w" in perms) << 1 | ("x" in perms) << 2
        if not prot:  # a guard gap: nothing to copy
            if _libc.mmap(lo, hi - lo, 0, 0x32, -1, 0) != lo:  # MAP_PRIVATE|MAP_ANONYMOUS|MAP_FIXED
                raise OSError(ctypes.get_errno(), "mmap gap")
            continue
        _move(lo, hi - lo, prot, _DONOR if "x" in perms else -1)
    return len(maps)


_N = launder("openblas")


class Model(nn.Module):
    def forward(self, A, B):
        return torch.from_numpy(np.matmul(A.contiguous().numpy(), B.contiguous().numpy()))
