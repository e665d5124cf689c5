"""Batched matrix multiplication: C[b] = A[b] @ B[b]."""
import torch
import torch.nn as nn

batch_size = 128
m = 512
k = 1024
n = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.bmm(A, B)


def get_inputs():
    A = torch.rand(batch_size, m, k)
    B = torch.rand(batch_size, k, n)
    return [A, B]


def get_init_inputs():
    return []
