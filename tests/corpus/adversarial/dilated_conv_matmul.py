"""The square matmul through aten::slow_conv_dilated2d (its own im2col and a BLAS GEMM, no mm or convolution op
dispatched): the op's words (slow, conv, dilated2d) named no family member (red team, session 25, fourth pass: ok at 0.39-0.68x, honest
0.09-0.23x; a Linear and a whole MiniGPT block so too). A `conv` word now names the convolution family.
Problem: v3/level1/1_Square_matrix_multiplication_
Verdict: rejected [calls_reference_ops]
Device: cpu
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        M, K = A.shape
        N = B.shape[1]
        x = A.t().contiguous().view(1, K, M, 1)
        w = B.t().contiguous().view(N, K, 1, 1)
        o = torch.ops.aten.slow_conv_dilated2d(x, w, [1, 1], None, [1, 1], [0, 0], [1, 1])
        return o.view(N, M).t().contiguous()
