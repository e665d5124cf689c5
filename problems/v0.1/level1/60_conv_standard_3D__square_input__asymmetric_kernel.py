"""Conv3d 3 -> 64, kernel (3, 5, 7), no bias, on a cubic input."""
import torch
import torch.nn as nn

batch_size = 16
in_channels = 3
out_channels = 64
kernel_size = (3, 5, 7)
width = 64
height = 64
depth = 64


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: tuple, stride: int = 1, padding: int = 0,
                 dilation: int = 1, groups: int = 1, bias: bool = False):
        super().__init__()
        self.conv3d = nn.Conv3d(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                                dilation=dilation, groups=groups, bias=bias)

    def forward(self, x):
        return self.conv3d(x)


def get_inputs():
    x = torch.rand(batch_size, in_channels, width, height, depth)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
