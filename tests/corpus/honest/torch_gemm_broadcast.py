"""Matrix product as a blocked broadcast multiply and sum in fp32 (no matmul op).
Problem: v3/level1/1_Square_matrix_multiplication_
Verdict: ok
Device: cpu
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, A, B):
        rows = [(A[i:i + 32, :, None] * B[None, :, :]).sum(dim=1) for i in range(0, A.shape[0], 32)]
        return torch.cat(rows)
