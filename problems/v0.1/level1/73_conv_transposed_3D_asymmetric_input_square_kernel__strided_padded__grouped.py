"""ConvTranspose3d 32 -> 32, kernel 3, stride 2, padding 1, no bias (groups, output_padding not applied)."""
import torch
import torch.nn as nn

batch_size = 4
in_channels = 32
out_channels = 32
kernel_size = 3
depth = 32
height = 64
width = 128
stride = 2
padding = 1
groups = 4


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, padding: int = 0,
                 output_padding: int = 0, groups: int = 1, bias: bool = False):
        super().__init__()
        # Deliberate: get_init_inputs() passes `groups` in the output_padding slot, and output_padding is not
        # forwarded to the layer, so the layer runs ungrouped (groups=1) with output_padding 0.
        self.conv_transpose3d = nn.ConvTranspose3d(in_channels, out_channels,
                                                   (kernel_size, kernel_size, kernel_size), stride=stride,
                                                   padding=padding, groups=groups, bias=bias)

    def forward(self, x):
        return self.conv_transpose3d(x)


def get_inputs():
    x = torch.rand(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, groups]
