"""Linear, divide by a constant, then GELU."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1024
input_size = 8192
output_size = 8192
divisor = 10.0


class Model(nn.Module):
    def __init__(self, input_size, output_size, divisor):
        super().__init__()
        self.linear = nn.Linear(input_size, output_size)
        self.divisor = divisor

    def forward(self, x):
        x = self.linear(x)
        x = x / self.divisor
        return F.gelu(x)


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, output_size, divisor]
