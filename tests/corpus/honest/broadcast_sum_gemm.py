"""Standard matmul written with elementwise framework ops only: each block of 32 rows of A broadcast against B,
multiplied and summed over K (aten::mul and aten::sum, whose CPU kernels are named and of no barred family). The
honest control beside the GEMM entries of the framework's generated code (adversarial/framework_gemm_*): a problem
that bars the GEMM family gives the profile's ops no allowance for unnamed framework code, and this kernel runs none.
Problem: v3/level1/2_Standard_matrix_multiplication_
Verdict: ok
Device: cpu
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        out = torch.empty(A.shape[0], B.shape[1], dtype=A.dtype)
        for i in range(0, A.shape[0], 32):
            torch.sum(A[i:i + 32, :, None] * B[None], dim=1, out=out[i:i + 32])
        return out
