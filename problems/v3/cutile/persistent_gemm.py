"""Half-precision GEMM (3072x3072 @ 3072x3072), to be solved with a persistent-tile kernel."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a @ b


def get_inputs():
    a = torch.randn(3072, 3072, dtype=torch.float16)
    b = torch.randn(3072, 3072, dtype=torch.float16)
    return [a, b]


def get_init_inputs():
    return []


OP_TYPE = "gemm"
SUPPORTED_PRECISIONS = ["fp16", "bf16"]
HARDWARE_REQUIRED = ["B200"]
CUTILE_LEVEL = 1
CUTILE_REFERENCE_SNIPPET = """\
# Illustrative only (not executed): persistent tiles with cuda.tile.
import cuda.tile as ct

@ct.kernel
def persistent_gemm(A, B, C, tm: ct.Constant[int], tn: ct.Constant[int], tk: ct.Constant[int]):
    n_tiles_n = ct.cdiv(C.shape[1], tn)
    n_tiles = ct.cdiv(C.shape[0], tm) * n_tiles_n
    # a fixed grid of CTAs (one per SM) strides over all output tiles
    for tile in range(ct.bid(0), n_tiles, ct.num_blocks(0)):
        bm, bn = tile // n_tiles_n, tile % n_tiles_n
        acc = ct.full((tm, tn), 0, dtype=ct.float32)
        for k in range(ct.cdiv(A.shape[1], tk)):
            a = ct.load(A, index=(bm, k), shape=(tm, tk), padding_mode=ct.PaddingMode.ZERO)
            b = ct.load(B, index=(k, bn), shape=(tk, tn), padding_mode=ct.PaddingMode.ZERO)
            acc = ct.mma(a, b, acc)
        ct.store(C, index=(bm, bn), tile=acc.astype(C.dtype))
"""
