"""Linear, sigmoid, Linear, then logsumexp over features."""
import torch
import torch.nn as nn

batch_size = 16384
input_size = 2048
hidden_size = 4096
output_size = 1024


class Model(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.linear1 = nn.Linear(input_size, hidden_size)
        self.linear2 = nn.Linear(hidden_size, output_size)

    def forward(self, x):
        x = self.linear1(x)
        x = torch.sigmoid(x)
        x = self.linear2(x)
        return torch.logsumexp(x, dim=1)


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden_size, output_size]
