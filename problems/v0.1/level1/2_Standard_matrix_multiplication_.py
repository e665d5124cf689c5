"""Matrix multiplication C = A @ B with A (M, K) and B (K, N)."""
import torch
import torch.nn as nn

M = 2048
K = 8192
N = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    A = torch.rand(M, K)
    B = torch.rand(K, N)
    return [A, B]


def get_init_inputs():
    return []
