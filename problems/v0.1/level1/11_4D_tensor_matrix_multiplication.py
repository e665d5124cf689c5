"""4-D tensor times matrix: einsum('bijl,lk->bijk')."""
import torch
import torch.nn as nn

b = 8
i = 256
j = 512
l = 256
k = 768


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.einsum("bijl,lk->bijk", A, B)


def get_inputs():
    A = torch.rand(b, i, j, l)
    B = torch.rand(l, k)
    return [A, B]


def get_init_inputs():
    return []
