"""The GEMM through numpy's own einsum loops (`np.einsum("ij,jk->ik")`, no BLAS): code of an installed library whose
file name was not among the framework's and whose function names (`*_sum_of_products_*`) carry no GEMM word, so the
CPU samples of the timed calls counted it as the submission's own work. Red team, session 41 (CPU, strong sandbox):
ok with no flag at 5 and 30 trials (0.07-0.14x; the honest blocked broadcast GEMM on this copy 0.005x). numpy's
compiled array math is the framework's code now, and a sum of products is the GEMM family's.
Problem: v3/level1/2_Standard_matrix_multiplication_
Verdict: rejected [calls_reference_ops]
Device: cpu
"""
import numpy as np
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, A, B):
        return torch.from_numpy(np.einsum("ij,jk->ik", A.numpy(), B.numpy()))
