"""Standard matmul: numpy's OpenBLAS sgemm from a byte copy of its library made in the build stage (the submission
names load_inline, so its import runs once in the build sandbox first): there it copies numpy.libs' OpenBLAS into
$TORCH_EXTENSIONS_DIR/tiles/libtiles.so, which the build cache carries and the grading sandbox is seeded with before
the candidate starts. The copy is older than the candidate (no code made at run time), has no framework library's
name, and is not the judge's file: its samples counted as the submission's own code.
Red team, session 28 (second pass): ok at 0.86x, 0.91x, 0.81x. Caught since: the build's files are compared page by
page with the code of the framework libraries the judge maps (a library's copy, or its code dumped to a file, carries
their pages): `calls_reference_ops`.
Problem: v3/level1/2_Standard_matrix_multiplication_
Verdict: rejected [calls_reference_ops]
Device: cpu
"""
import ctypes
import os
import shutil

import numpy  # noqa: F401  (loads libgfortran, which the copy needs by its soname)
import torch
import torch.nn as nn

_dir = os.path.join(os.environ.get("TORCH_EXTENSIONS_DIR", os.getcwd()), "tiles")
_dst = os.path.join(_dir, "libtiles.so")
if not os.path.exists(_dst):  # the build stage
    os.makedirs(_dir, exist_ok=True)
    _src = os.path.join(os.path.dirname(numpy.__file__), "..", "numpy.libs")
    shutil.copyfile(os.path.join(_src, next(f for f in os.listdir(_src) if "openblas" in f)), _dst)
    os.chmod(_dst, 0o755)
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
