"""Pointwise (1x1) Conv2d 64 -> 128, no bias."""
import torch
import torch.nn as nn

batch_size = 16
in_channels = 64
out_channels = 128
width = 1024
height = 1024


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, bias: bool = False):
        super().__init__()
        # named conv1d although it is a Conv2d (kept for state_dict compatibility)
        self.conv1d = nn.Conv2d(in_channels, out_channels, kernel_size=1, stride=1, padding=0, bias=bias)

    def forward(self, x):
        return self.conv1d(x)


def get_inputs():
    x = torch.rand(batch_size, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels]
