"""GroupNorm with 8 groups over 64 channels."""
import torch
import torch.nn as nn

batch_size = 112
features = 64
num_groups = 8
dim1 = 512
dim2 = 512


class Model(nn.Module):
    def __init__(self, num_features: int, num_groups: int):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=num_features)

    def forward(self, x):
        return self.gn(x)


def get_inputs():
    x = torch.rand(batch_size, features, dim1, dim2)
    return [x]


def get_init_inputs():
    return [features, num_groups]
