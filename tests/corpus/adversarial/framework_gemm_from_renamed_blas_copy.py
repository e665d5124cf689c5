"""Standard matmul: numpy's OpenBLAS sgemm from a byte copy of its library, written at import into the work dir under
another name (libtiles.so) and loaded there. The sampler named a mapping the framework's by its file name
(libscipy_openblas...) or by being the same file (device, inode) as a library the judge maps; the copy was neither,
so its samples counted as the submission's own code. No framework op runs, nothing is in the build.
Red team, session 28: ok at 0.75x and 0.78x on a 1024 x 1024 GEMM. Caught since: code in a file made after the
submission's process started is code made at run time, counted like the framework's JIT code; on a GEMM problem that
is the GEMM's work: `calls_reference_ops`.
Problem: v3/level1/2_Standard_matrix_multiplication_
Verdict: rejected [calls_reference_ops]
Device: cpu
Options: needs_sampler
"""
import ctypes
import os
import shutil

import numpy  # noqa: F401  (loads libgfortran, which the copy needs by its soname)
import torch
import torch.nn as nn

_src = os.path.join(os.path.dirname(numpy.__file__), "..", "numpy.libs")
_blas = next(f for f in os.listdir(_src) if "openblas" in f)
_dst = os.path.join(os.getcwd(), "libtiles.so")
shutil.copyfile(os.path.join(_src, _blas), _dst)
os.environ["OPENBLAS_NUM_THREADS"] = "1"
_lib = ctypes.CDLL(_dst)
_lib.scipy_openblas_set_num_threads64_(1)
_sgemm = _lib.scipy_cblas_sgemm64_
_sgemm.restype = None
_sgemm.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                   ctypes.c_float, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_float,
                   ctypes.c_void_p, ctypes.c_int64]


class Model(nn.Module):
    def forward(self, A, B):
        A, B = A.contiguous(), B.contiguous()
        M, K = A.shape
        N = B.shape[1]
        C = torch.empty((M, N), dtype=A.dtype)
        _sgemm(101, 111, 111, M, N, K, 1.0, A.data_ptr(), K, B.data_ptr(), N, 0.0, C.data_ptr(), N)
        return C
