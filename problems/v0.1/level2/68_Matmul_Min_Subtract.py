"""Linear, elementwise min with a learned scalar, then subtract that scalar."""
import torch
import torch.nn as nn

batch_size = 128
in_features = 16384
out_features = 16384
constant = 2.0


class Model(nn.Module):
    def __init__(self, in_features, out_features, constant):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.constant = nn.Parameter(torch.tensor(constant))

    def forward(self, x):
        x = self.linear(x)
        x = torch.min(x, self.constant)
        return x - self.constant


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, constant]
