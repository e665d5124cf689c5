"""Matrix-vector product C = A @ B with B a (K, 1) column."""
import torch
import torch.nn as nn

M = 2048
K = 1048576


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    A = torch.rand(M, K)
    B = torch.rand(K, 1)
    return [A, B]


def get_init_inputs():
    return []
