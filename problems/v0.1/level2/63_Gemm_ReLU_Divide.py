"""Linear, ReLU, then divide by a constant."""
import torch
import torch.nn as nn

batch_size = 1024
in_features = 8192
out_features = 8192
divisor = 2.0


class Model(nn.Module):
    def __init__(self, in_features, out_features, divisor):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.divisor = divisor

    def forward(self, x):
        x = self.linear(x)
        x = torch.relu(x)
        return x / self.divisor


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, divisor]
