"""Conv2d, subtract two constants, then Mish."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
in_channels = 8
out_channels = 64
height = width = 256
kernel_size = 3
subtract_value_1 = 0.5
subtract_value_2 = 0.2


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, subtract_value_1, subtract_value_2):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.subtract_value_1 = subtract_value_1
        self.subtract_value_2 = subtract_value_2

    def forward(self, x):
        x = self.conv(x)
        x = x - self.subtract_value_1
        x = x - self.subtract_value_2
        return F.mish(x)


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, subtract_value_1, subtract_value_2]
