"""Matrix multiplication with a very large reduction dimension K."""
import torch
import torch.nn as nn

M = 256
N = 256
K = 524288


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
