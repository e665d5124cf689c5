"""ConvTranspose2d, add a constant, min with 0, GELU, then scale."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
in_channels = 64
out_channels = 128
height = width = 64
kernel_size = 4
stride = 2
add_value = 0.5
multiply_value = 2.0


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, add_value, multiply_value):
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride)
        self.add_value = add_value
        self.multiply_value = multiply_value

    def forward(self, x):
        x = self.conv_transpose(x)
        x = x + self.add_value
        x = torch.min(x, torch.tensor(0.0, device=x.device))
        x = F.gelu(x)
        return x * self.multiply_value


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, add_value, multiply_value]
