"""The square matmul as a oneDNN 1x1 convolution through torch.ops.mkldnn_prepacked, a namespace the list of framework
namespaces lacked (red team, session 25, fourth pass: ok at 0.46-0.50x, honest 0.09-0.23x). Every namespace the judge's own dispatcher holds
is now the framework's.
Problem: v3/level1/1_Square_matrix_multiplication_
Verdict: rejected [calls_reference_ops]
Device: cpu
"""
import torch
import torch.nn as nn

_ops = torch.ops.mkldnn_prepacked


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        M, K = A.shape
        N = B.shape[1]
        ctx = _ops.conv2d_prepack(B.t().contiguous().view(N, K, 1, 1), None, [1, 1], [0, 0], [1, 1], 1, [1, K, M, 1], "none")
        y = _ops.conv2d_run(A.t().contiguous().view(1, K, M, 1), ctx)
        return y.view(N, M).t().contiguous()
