"""Conv2d, divide by a constant, then LeakyReLU."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
in_channels = 8
out_channels = 64
height = width = 128
kernel_size = 3
divisor = 2


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, divisor):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.divisor = divisor

    def forward(self, x):
        x = self.conv(x)
        x = x / self.divisor
        return F.leaky_relu(x, negative_slope=0.01)


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, divisor]
