"""Half-precision GEMM (4096x2048 @ 2048x4096), to be solved with a warp-specialised kernel."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a @ b


def get_inputs():
    a = torch.randn(4096, 2048, dtype=torch.float16)
    b = torch.randn(2048, 4096, dtype=torch.float16)
    return [a, b]


def get_init_inputs():
    return []


OP_TYPE = "gemm"
SUPPORTED_PRECISIONS = ["fp16", "bf16"]
HARDWARE_REQUIRED = ["B200"]
CUTILE_LEVEL = 1
CUTILE_REFERENCE_SNIPPET = """\
# Illustrative only (not executed): warp specialisation with cuda.tile.
# Producer warps stream A/B tiles into a multi-stage shared-memory ring while consumer
# warps issue ct.mma on the stage that is ready; the compiler maps the pipelined loop below.
import cuda.tile as ct

@ct.kernel
def ws_gemm(A, B, C, tm: ct.Constant[int], tn: ct.Constant[int], tk: ct.Constant[int]):
    bm, bn = ct.bid(0), ct.bid(1)
    acc = ct.full((tm, tn), 0, dtype=ct.float32)
    for k in range(ct.cdiv(A.shape[1], tk)):                      # num_stages-deep pipeline
        a = ct.load(A, index=(bm, k), shape=(tm, tk), padding_mode=ct.PaddingMode.ZERO)  # producer
        b = ct.load(B, index=(k, bn), shape=(tk, tn), padding_mode=ct.PaddingMode.ZERO)  # producer
        acc = ct.mma(a, b, acc)                                                            # consumer
    ct.store(C, index=(bm, bn), tile=acc.astype(C.dtype))
"""
