"""Standard matmul written with elementwise framework ops only: C accumulated as K outer products, each row of B
scaled by a column of A (aten::addcmul_, whose CPU kernel is named and of no barred family). The honest control beside
the GEMM entries of the framework's generated code (adversarial/framework_gemm_*): a problem that bars the GEMM family
gives the profile's ops no allowance for unnamed framework code, and this kernel runs none (0.0 ms a call; before the
linkage stubs were named, 0.7-1.3 ms a call of its broadcast-and-sum version counted as unnamed, session 28).
Problem: v3/level1/2_Standard_matrix_multiplication_
Verdict: ok
Device: cpu
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        out = torch.zeros(A.shape[0], B.shape[1], dtype=A.dtype)
        for k in range(A.shape[1]):
            out.addcmul_(A[:, k:k + 1], B[k:k + 1])
        return out
