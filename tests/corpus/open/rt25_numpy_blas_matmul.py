"""The square matmul through numpy's BLAS (torch.from_numpy(np.matmul(...))): no torch op does the heavy work, so the
CPU profile shows none (red team, session 25: ok at 0.69x and 0.61x, honest 0.09-0.11x; numpy's threads also used
more CPU than the sandbox's one thread). On a GPU the tensors would have to leave the device. Open on the CPU
(SECURITY.md, work the framework cannot see).
Problem: v3/level1/1_Square_matrix_multiplication_
"""
import numpy as np
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, A, B):
        return torch.from_numpy(np.matmul(A.numpy(), B.numpy()))
