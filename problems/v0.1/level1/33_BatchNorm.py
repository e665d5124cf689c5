"""BatchNorm2d in training mode (batch statistics, running buffers updated)."""
import torch
import torch.nn as nn

batch_size = 64
features = 64
dim1 = 512
dim2 = 512

QUIRKS = ["batchnorm_train_stats"]


class Model(nn.Module):
    def __init__(self, num_features: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features=num_features)

    def forward(self, x):
        return self.bn(x)


def get_inputs():
    x = torch.rand(batch_size, features, dim1, dim2)
    return [x]


def get_init_inputs():
    return [features]
