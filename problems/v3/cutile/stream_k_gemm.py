"""Half-precision GEMM (4096x8192 @ 8192x2048), to be solved with a Stream-K / split-K kernel."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a @ b


def get_inputs():
    a = torch.randn(4096, 8192, dtype=torch.float16)
    b = torch.randn(8192, 2048, dtype=torch.float16)
    return [a, b]


def get_init_inputs():
    return []


OP_TYPE = "gemm"
SUPPORTED_PRECISIONS = ["fp16", "bf16"]
HARDWARE_REQUIRED = ["B200"]
CUTILE_LEVEL = 1
CUTILE_REFERENCE_SNIPPET = """\
# Illustrative only (not executed): split-K with cuda.tile; partial sums reduced afterwards.
import cuda.tile as ct

@ct.kernel
def split_k_gemm(A, B, P, tm: ct.Constant[int], tn: ct.Constant[int], tk: ct.Constant[int],
                 splits: ct.Constant[int]):
    bm, bn, s = ct.bid(0), ct.bid(1), ct.bid(2)
    k_tiles = ct.cdiv(A.shape[1], tk)
    per_split = ct.cdiv(k_tiles, splits)
    acc = ct.full((tm, tn), 0, dtype=ct.float32)
    for k in range(s * per_split, min((s + 1) * per_split, k_tiles)):
        a = ct.load(A, index=(bm, k), shape=(tm, tk), padding_mode=ct.PaddingMode.ZERO)
        b = ct.load(B, index=(k, bn), shape=(tk, tn), padding_mode=ct.PaddingMode.ZERO)
        acc = ct.mma(a, b, acc)
    ct.store(P, index=(s, bm, bn), tile=acc.reshape((1, tm, tn)))  # fp32 partials
# a second pass sums P over the split axis and casts to fp16
"""
