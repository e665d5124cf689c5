"""2-D average pooling with kernel 11 (stride defaults to the kernel size)."""
import torch
import torch.nn as nn

batch_size = 16
channels = 64
height = 2048
width = 2048
kernel_size = 11


class Model(nn.Module):
    def __init__(self, kernel_size: int, stride: int = None, padding: int = 0):
        super().__init__()
        self.avg_pool = nn.AvgPool2d(kernel_size=kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.avg_pool(x)


def get_inputs():
    x = torch.rand(batch_size, channels, height, width)
    return [x]


def get_init_inputs():
    return [kernel_size]
