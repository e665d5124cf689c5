"""Tall-skinny times short-wide matrix multiplication (M x N) @ (N x M)."""
import torch
import torch.nn as nn

M = 32768
N = 32


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


def get_inputs():
    A = torch.rand(M, N)
    B = torch.rand(N, M)
    return [A, B]


def get_init_inputs():
    return []
