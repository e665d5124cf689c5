"""The square matmul as a unit-upper-triangular solve, [[I, -A], [0, I]] X = [0; B], whose top half is A @ B (BLAS
trsm at twice the flops; red team, session 25, fourth pass: ok at 0.31-0.67x, honest 0.09-0.23x). Linear-algebra solves are now a family that
can do a GEMM's work.
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
        T = torch.zeros(M + K, M + K, dtype=A.dtype)
        T[:M, M:] = -A
        R = torch.zeros(M + K, N, dtype=A.dtype)
        R[M:] = B
        X = torch.linalg.solve_triangular(T, R, upper=True, unitriangular=True)
        return X[:M].contiguous()
