"""Standard matmul: numpy's OpenBLAS sgemm from a plain copy of the library made at run time (copied into the work dir
at import, not a byte changed), whose text range is covered, between calls, by a mapping of an 8 KiB file torch
installs (torch/lib/libtorch_global_deps.so, mapped far past its end: mmap allows it, and nothing ever touches those
pages). No build stage, no laundering. Red team, session 42b (CPU, strong sandbox).
Every forward maps the copy's text back over its range (mmap MAP_FIXED from the copy's file), runs sgemm, and maps
the installed file over the range again. harness/sampler.py `Sampler.stop` reads `_executable_regions` AFTER the
batch, so every sample the GEMM left at those addresses falls in a mapping of an installed file: not the
framework's by name, not one of the judge's libraries, older than the candidate, not the sandbox's, never written
(`_privately_written`), outside the work dir, so not the build's either (no copy search); `functions_at` finds no
symbol that far into the file, and an installed file's unnamed code is "other": the submission's own work.
Without the swap the copy is rejected [calls_reference_ops] (8.3 ms a call of code made at run time).
Problem: v3/level1/2_Standard_matrix_multiplication_
Verdict: rejected [calls_reference_ops]
Device: cpu
Options: needs_sampler
"""
import ctypes
import mmap
import os
import shutil

import numpy as np
import torch
import torch.nn as nn

_src = os.path.join(os.path.dirname(np.__file__), "..", "numpy.libs")
_src = os.path.realpath(os.path.join(_src, next(f for f in os.listdir(_src) if "openblas" in f)))
_decoy = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_global_deps.so")
_dst = os.path.join(os.getcwd(), "rt", "libtiles.so")
os.makedirs(os.path.dirname(_dst), exist_ok=True)
shutil.copyfile(_src, _dst)
os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["OPENBLAS_CORETYPE"] = "Haswell"
_lib = ctypes.CDLL(_dst)
_lib.scipy_openblas_set_num_threads64_(1)
_sgemm = _lib.scipy_cblas_sgemm64_
_sgemm.restype = None
_sgemm.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                   ctypes.c_float, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_float,
                   ctypes.c_void_p, ctypes.c_int64]

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype, _libc.mmap.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                                                            ctypes.c_int, ctypes.c_int, ctypes.c_long]
_real_dst = os.path.realpath(_dst)
_text = []
with open("/proc/self/maps") as _f:
    for _line in _f:
        _p = _line.split()
        if len(_p) >= 6 and _p[5] == _real_dst and "x" in _p[1]:
            _a, _b = (int(v, 16) for v in _p[0].split("-"))
            _text.append((_a, _b - _a, int(_p[2], 16)))
_fd_hot, _fd_cold = os.open(_dst, os.O_RDONLY), os.open(_decoy, os.O_RDONLY)


def _map(fd):
    for a, n, off in _text:
        got = _libc.mmap(a, n, mmap.PROT_READ | mmap.PROT_EXEC, mmap.MAP_PRIVATE | 0x10, fd, off)  # MAP_FIXED
        if got != a:
            raise OSError(ctypes.get_errno(), "mmap")


_map(_fd_cold)


class Model(nn.Module):
    def forward(self, A, B):
        _map(_fd_hot)
        try:
            A, B = A.contiguous(), B.contiguous()
            M, K = A.shape
            N = B.shape[1]
            C = torch.empty((M, N), dtype=A.dtype)
            _sgemm(101, 111, 111, M, N, K, 1.0, A.data_ptr(), K, B.data_ptr(), N, 0.0, C.data_ptr(), N)
            return C
        finally:
            _map(_fd_cold)
