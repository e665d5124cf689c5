"""Matrix multiplication with irregular (non power-of-two) sizes."""
import torch
import torch.nn as nn

M = 8205
K = 2949
N = 5921


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
