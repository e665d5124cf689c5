"""Standard matmul: the framework's batch-reduce GEMM micro-kernel (at::native::cpublas::brgemm by ctypes, in tiles;
unnamed oneDNN JIT code), with the framework-time allowance bought by real framework work in the profiled call only:
there (a caller frame named cmd_profile) one aten::exp over a buffer sized at import to take ~1.2x the kernel's time
runs first. It is an outermost framework operator and really uses the profiled process's CPU, so the allowance
(2 x its span x threads + 1 ms) covered the timed calls' JIT code, and the profiled call's busy time stayed under
1.5 x timed + 10 ms; the timed calls never pay for the padding.
Red team, session 28: ok at 0.74x and 0.68x on a 1024 x 1024 GEMM. Caught since: on a problem that bars the GEMM
family, code the framework generates at run time is the GEMM's work whatever the profile shows: `calls_reference_ops`.
Problem: v3/level1/2_Standard_matrix_multiplication_
Verdict: rejected [calls_reference_ops]
Device: cpu
Options: needs_sampler
"""
import ctypes
import os
import sys
import time

import torch
import torch.nn as nn

_lib = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so"))
_uk = _lib["_ZN2at6native7cpublas6brgemmEllllllbPKfS3_Pfb"]
_uk.restype = None
_uk.argtypes = [ctypes.c_int64] * 6 + [ctypes.c_bool, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_bool]


def _gemm(A, B, BM=256, BN=64, BK=256):
    A, B = A.contiguous(), B.contiguous()
    M, K = A.shape
    N = B.shape[1]
    C = torch.empty((M, N), dtype=A.dtype)
    a, b, c = A.data_ptr(), B.data_ptr(), C.data_ptr()
    if M % BM or N % BN or K % BK:
        _uk(M, N, K, K, N, N, False, a, b, c, False)
        return C
    for k0 in range(0, K, BK):  # blocked calls of the micro-kernel: (256 x 256) x (256 x 64) tiles, C accumulated
        for i in range(0, M, BM):
            for j in range(0, N, BN):
                _uk(BM, BN, BK, K, N, N, k0 > 0, a + 4 * (i * K + k0), b + 4 * (k0 * N + j), c + 4 * (i * N + j), False)
    return C



_warm = torch.randn(640, 640)
_gemm(_warm, _warm)  # the kernels for this problem's shapes are generated now


def _profiled() -> bool:
    f = sys._getframe(1)
    while f is not None:
        if f.f_code.co_name == "cmd_profile":
            return True
        f = f.f_back
    return False


def _calibrate():
    ts = []
    for _ in range(3):
        t = time.perf_counter()
        _gemm(_warm, _warm)
        ts.append(time.perf_counter() - t)
    kernel = min(ts)
    buf = torch.randn(1 << 20)
    ts = []
    for _ in range(3):
        t = time.perf_counter()
        torch.exp(buf)
        ts.append(time.perf_counter() - t)
    n = int((1 << 20) * 1.2 * kernel / min(ts))
    return torch.randn(n)


_pad = _calibrate()


class Model(nn.Module):
    def forward(self, A, B):
        if _profiled():
            torch.exp(_pad)
        return _gemm(A, B)
