"""Square matmul done by the framework's convolution: C = A @ B as a 1x1 convolution of A^T (K channels, length M)
with B^T as N filters. The convolution (oneDNN or slow_conv2d on the CPU, cuDNN on a GPU) does all the work, with
its own GEMM that dispatches no aten::mm, and the convolution family is not the reference's.
Problem: v3/level1/1_Square_matrix_multiplication_
Verdict: rejected [calls_reference_ops]
Device: cpu
Graded ok, accepted, 0.70x on the CPU when only the reference's own families were barred (red team, 2026-12-03);
families that can do one another's work are now barred together (kb_data/rules.py, SUBSTITUTE_FAMILIES).
"""
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def forward(self, A, B):
        # input (1, K, M, 1), filters (N, K, 1, 1) -> (1, N, M, 1), which is C^T
        out = F.conv2d(A.t().contiguous()[None, :, :, None], B.t().contiguous()[:, :, None, None])
        return out[0, :, :, 0].t().contiguous()
