"""Depthwise Conv2d 8 -> 8 (groups 8) with a vertical (3, 1) kernel, no bias."""
import torch
import torch.nn as nn

batch_size = 64
in_channels = 8
kernel_size = 3
width = 512
height = 512
stride = 1
padding = 0
dilation = 1


class Model(nn.Module):
    def __init__(self, in_channels: int, kernel_size: int, stride: int = 1, padding: int = 0, dilation: int = 1,
                 bias: bool = False):
        super().__init__()
        self.conv2d = nn.Conv2d(in_channels, in_channels, kernel_size=(kernel_size, 1), stride=stride,
                                padding=padding, dilation=dilation, groups=in_channels, bias=bias)

    def forward(self, x):
        return self.conv2d(x)


def get_inputs():
    x = torch.rand(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, kernel_size, stride, padding, dilation]
