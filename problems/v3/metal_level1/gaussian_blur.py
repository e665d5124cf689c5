"""Separable Gaussian blur (sigma 2, 11 taps, zero padding) of every channel of an image batch."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, sigma: float, kernel_size: int):
        super().__init__()
        self.sigma = sigma
        self.kernel_size = kernel_size
        self.padding = kernel_size // 2
        coords = torch.arange(kernel_size, dtype=torch.float32) - kernel_size // 2
        k = torch.exp(-0.5 * (coords / sigma) ** 2)
        k = k / k.sum()
        self.register_buffer("kernel_h", k.view(1, 1, 1, kernel_size).clone())
        self.register_buffer("kernel_v", k.view(1, 1, kernel_size, 1).clone())

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        B, C, H, W = image.shape
        x = image.view(B * C, 1, H, W)
        x = F.conv2d(x, self.kernel_h, padding=(0, self.padding))
        x = F.conv2d(x, self.kernel_v, padding=(self.padding, 0))
        return x.view(B, C, H, W)


def get_inputs():
    image = torch.randn(4, 3, 1024, 1024)
    return [image]


def get_init_inputs():
    return [2.0, 11]


OP_TYPE = "conv"
SUPPORTED_PRECISIONS = ["fp32"]
HARDWARE_REQUIRED = ["M4MAX"]
METAL_LEVEL = 1
