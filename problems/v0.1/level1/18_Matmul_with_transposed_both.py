"""Matrix multiplication A^T @ B^T with A stored (K, M) and B stored (N, K)."""
import torch
import torch.nn as nn

M = 2048
K = 8192
N = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A.T, B.T)


def get_inputs():
    A = torch.rand(K, M)
    B = torch.rand(N, K)
    return [A, B]


def get_init_inputs():
    return []
