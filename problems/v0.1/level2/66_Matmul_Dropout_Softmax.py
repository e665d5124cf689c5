"""Linear, active (train-mode) dropout, then softmax over features."""
import torch
import torch.nn as nn

batch_size = 128
in_features = 16384
out_features = 16384
dropout_p = 0.2

QUIRKS = ["dropout_in_forward"]


class Model(nn.Module):
    def __init__(self, in_features, out_features, dropout_p):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.dropout = nn.Dropout(dropout_p)  # active: the model is never put in eval mode

    def forward(self, x):
        x = self.matmul(x)
        x = self.dropout(x)
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, dropout_p]
