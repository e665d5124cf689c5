"""Matrix multiplication with a tiny reduction dimension K."""
import torch
import torch.nn as nn

M = 32768
N = 32768
K = 64


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
