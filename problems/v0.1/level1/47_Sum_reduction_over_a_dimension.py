"""Sum over dim 1, keeping the reduced dim."""
import torch
import torch.nn as nn

batch_size = 128
dim1 = 4096
dim2 = 4095
reduce_dim = 1


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.sum(x, dim=self.dim, keepdim=True)


def get_inputs():
    x = torch.rand(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduce_dim]
