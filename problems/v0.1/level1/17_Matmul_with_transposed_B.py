"""Matrix multiplication A @ B^T with B stored as (N, K)."""
import torch
import torch.nn as nn

M = 2048
K = 8192
N = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B.T)


def get_inputs():
    A = torch.rand(M, K)
    B = torch.rand(N, K)
    return [A, B]


def get_init_inputs():
    return []
