"""ConvTranspose3d, add a second input, then multiply by its own HardSwish."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
in_channels = 32
out_channels = 64
D, H, W = 16, 16, 16
kernel_size = 3
stride = 2
padding = 1
output_padding = 1
bias_shape = (out_channels, 1, 1, 1, 1)

QUIRKS = ["unused_parameters"]


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, output_padding, bias_shape):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose3d(in_channels, out_channels, kernel_size, stride=stride,
                                                 padding=padding, output_padding=output_padding)
        self.bias = nn.Parameter(torch.randn(bias_shape))  # consumes RNG but is never used

    def forward(self, x, add_input):
        x = self.conv_transpose(x)
        x = x + add_input
        return x * F.hardswish(x)


def get_inputs():
    return [torch.rand(batch_size, in_channels, D, H, W),
            torch.rand(batch_size, out_channels, D * stride, H * stride, W * stride)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, output_padding, bias_shape]
