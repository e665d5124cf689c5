"""Standard matmul: the framework's own mm (by redispatch, below the profiler) with libtorch_cpu.so's code copied
into a private mapping of /dev/zero at the same addresses and the rest of the library moved to anonymous copies:
MKL's statically linked sgemm then ran in code the sampler counted as the submission's own (a file-backed mapping of
an old file of no framework library's name), and no mapping of the library was left for the layout check.
Red team, session 28 (second pass): ok at 0.98x and 0.99x. Caught since: executable code of a mapping that is no
regular file, or whose pages the process wrote (copy-on-write), is code made at run time, counted like the
framework's JIT code; on a GEMM problem that is the GEMM's work: `calls_reference_ops`.
Since session 42 a CPU grading refuses mremap with MREMAP_FIXED (hostile/moved_mapping_refused_on_a_cpu_gelu), so
its import fails (compile_error); the check it was written for (rejected [calls_reference_ops]) stays behind that refusal.
Problem: v3/level1/2_Standard_matrix_multiplication_
Verdict: caught
Device: cpu
Options: needs_sampler
"""
import ctypes
import os

import torch
import torch.nn as nn

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.mremap.restype = ctypes.c_void_p
_libc.mremap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p]
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
_ZERO = os.open("/dev/zero", os.O_RDWR)


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
        _move(lo, hi - lo, prot, _ZERO if "x" in perms else -1)
    return len(maps)


_N = launder("libtorch_cpu")

_C = torch._C
_KS = getattr(_C, "Dispatch" + "KeySet")(getattr(_C, "Dispatch" + "Key").CPU)
_GO = getattr(getattr(torch.ops.aten, "m" + "m").default, "re" + "dispatch")


class Model(nn.Module):
    def forward(self, A, B):
        return _GO(_KS, A.contiguous(), B.contiguous())
