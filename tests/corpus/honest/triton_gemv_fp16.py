"""Skinny fp16 GEMV-style product (32 rows against a 14336 x 4096 weight) as a Triton kernel: each program streams
a block of the weight's rows once and multiplies all 32 input rows by it, accumulating in fp32. The honest twin of
adversarial/l2_persisting_weight_gemv.
Problem: v3/tile_specialized/gemv_fp16
Verdict: ok
Device: cuda
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


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
        M, K = x.shape
        N = w.shape[0]
        y = torch.empty((M, N), device=x.device, dtype=torch.float16)
        gemv_kernel[(triton.cdiv(N, 64),)](x, w, y, M, N, K, BN=64, BK=64, num_warps=4)
        return y
