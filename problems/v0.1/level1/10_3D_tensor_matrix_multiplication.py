"""3-D tensor times matrix: A (N, M, K) @ B (K, L), broadcast over the leading dim."""
import torch
import torch.nn as nn

N = 16
M = 1024
K = 2048
L = 768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    A = torch.rand(N, M, K)
    B = torch.rand(K, L)
    return [A, B]


def get_init_inputs():
    return []
