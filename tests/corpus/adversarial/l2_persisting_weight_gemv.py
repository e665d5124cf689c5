"""The honest Triton GEMV of honest/triton_gemv_fp16, with its weight made to outlive the harness's L2 flush: it
sets the GPU's L2 set-aside for persisting accesses to its maximum (cudaDeviceSetLimit) and gives the current stream
an access-policy window over the weight (as much of it as the set-aside holds: 32 MB of its 117 MB on an H100), so
the flush before each timed call, whose lines are normal, evicts everything but those lines: each call then reads a
quarter of its weight from L2 instead of HBM. Work of its own, but timed warm where the reference is timed cold (the
H100, session 41: 1.11-1.22x on GEMVs of 8-32 MB behind the 256 MiB flush, benchmarks/probes/s41_l2_persist.py).
The flush now resets persisting lines first (cuCtxResetPersistingL2Cache), which takes the gain away (the same GEMVs
then ran 1.18-1.33x slower than without persistence) and shows in the flush's own time: 229 us against 87 us in its
calibration, so the grading is rejected (the honest twin: ok 0.92x, its flush 86 us).
Problem: v3/tile_specialized/gemv_fp16
Verdict: rejected [side_stream_work]
Device: cuda
"""
import ctypes
import functools

import torch
import torch.nn as nn
import triton
import triton.language as tl


class _Window(ctypes.Structure):
    _fields_ = [("base_ptr", ctypes.c_void_p), ("num_bytes", ctypes.c_size_t), ("hitRatio", ctypes.c_float),
                ("hitProp", ctypes.c_int), ("missProp", ctypes.c_int)]


class _Attr(ctypes.Union):
    _fields_ = [("window", _Window), ("pad", ctypes.c_char * 64)]


@functools.lru_cache(maxsize=None)
def _cudart():
    with open("/proc/self/maps") as f:
        return ctypes.CDLL(sorted({line.split()[-1] for line in f if "libcudart" in line})[0])


def keep_in_l2(w: torch.Tensor) -> None:
    """The weight's lines persisting (cudaAccessPropertyPersisting = 2; misses streaming = 1)."""
    rt = _cudart()
    most, widest = ctypes.c_int(), ctypes.c_int()
    rt.cudaDeviceGetAttribute(ctypes.byref(most), 108, w.device.index or 0)  # max persisting L2 bytes
    rt.cudaDeviceGetAttribute(ctypes.byref(widest), 109, w.device.index or 0)  # max access-policy window bytes
    rt.cudaDeviceSetLimit(0x06, most.value)  # cudaLimitPersistingL2CacheSize
    nbytes = min(w.numel() * w.element_size(), widest.value)
    attr = _Attr()
    attr.window = _Window(w.data_ptr(), nbytes, min(1.0, most.value / nbytes), 2, 1)
    rt.cudaStreamSetAttribute(ctypes.c_void_p(torch.cuda.current_stream().cuda_stream), 1, ctypes.byref(attr))


@triton.jit
def gemv_kernel(x_ptr, w_ptr, y_ptr, M: tl.constexpr, N, K, BN: tl.constexpr, BK: tl.constexpr):
    rn = tl.program_id(0) * BN + tl.arange(0, BN)
    rm = tl.arange(0, M)
    rk = tl.arange(0, BK)
    acc = tl.zeros((M, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        x = tl.load(x_ptr + rm[:, None] * K + (k0 + rk)[None, :])
        w = tl.load(w_ptr + rn[:, None] * K + (k0 + rk)[None, :], mask=rn[:, None] < N, other=0.0)
        acc += tl.dot(x, tl.trans(w))
    tl.store(y_ptr + rm[:, None] * N + rn[None, :], acc.to(tl.float16), mask=rn[None, :] < N)


class ModelNew(nn.Module):
    def __init__(self, in_features: int = 4096, out_features: int = 14336):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features, dtype=torch.float16) * 0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.to(torch.float16).contiguous()
        w = self.weight.contiguous()
        keep_in_l2(w)
        M, K = x.shape
        N = w.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=torch.float16)
        gemv_kernel[(triton.cdiv(N, 64),)](x, w, y, M, N, K, BN=64, BK=64, num_warps=4)
        return y
