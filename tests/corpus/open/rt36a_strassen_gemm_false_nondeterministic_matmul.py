"""FALSE POSITIVE (honest kernel). One level of Strassen's algorithm: A and B split into 2 x 2 blocks, seven block
products (each a blocked broadcast multiply and sum, as honest/torch_gemm_broadcast does the whole product) and
Strassen's additions. Exact in real arithmetic, deterministic (two runs on equal inputs are bitwise equal), about
7/8 of the standard product's multiplies, and as close to float64 as a few roundings more allow. The timed bitwise
repeat redraws one value of A and requires the outputs to be bitwise equal wherever the reference's forward-mode
tangent does not reach (rows other than that value's row). In Strassen's algorithm a value of the block A11 also
enters M1 = (A11 + A22)(B11 + B22), M3 = A11 (B12 - B22) and M6 = (A21 - A11)(B11 + B12), whose sum in
C22 = M1 - M2 + M3 + M6 cancels it only in exact arithmetic: the bottom half's rows move in their last bits (and an
A22 value moves the top half's the same way), which the check reads as nondeterminism.
Problem: v3/level1/1_Square_matrix_multiplication_
Verdict: ok
Device: cpu
"""
import torch
import torch.nn as nn


def _mm(X, Y):
    rows = [(X[i:i + 32, :, None] * Y[None, :, :]).sum(dim=1) for i in range(0, X.shape[0], 32)]
    return torch.cat(rows)


class Model(nn.Module):
    def forward(self, A, B):
        n = A.shape[0]
        h = n // 2
        if n % 2 or n < 64:
            return _mm(A, B)
        A11, A12, A21, A22 = A[:h, :h], A[:h, h:], A[h:, :h], A[h:, h:]
        B11, B12, B21, B22 = B[:h, :h], B[:h, h:], B[h:, :h], B[h:, h:]
        M1 = _mm(A11 + A22, B11 + B22)
        M2 = _mm(A21 + A22, B11)
        M3 = _mm(A11, B12 - B22)
        M4 = _mm(A22, B21 - B11)
        M5 = _mm(A11 + A12, B22)
        M6 = _mm(A21 - A11, B11 + B12)
        M7 = _mm(A12 - A22, B21 + B22)
        C = torch.empty(n, n, dtype=A.dtype)
        C[:h, :h] = M1 + M4 - M5 + M7
        C[:h, h:] = M3 + M5
        C[h:, :h] = M2 + M4
        C[h:, h:] = M1 - M2 + M3 + M6
        return C
