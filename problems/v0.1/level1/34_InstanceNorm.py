"""InstanceNorm2d (no affine, no running stats)."""
import torch
import torch.nn as nn

batch_size = 112
features = 64
dim1 = 512
dim2 = 512


class Model(nn.Module):
    def __init__(self, num_features: int):
        super().__init__()
        self.inorm = nn.InstanceNorm2d(num_features=num_features)

    def forward(self, x):
        return self.inorm(x)


def get_inputs():
    x = torch.rand(batch_size, features, dim1, dim2)
    return [x]


def get_init_inputs():
    return [features]
