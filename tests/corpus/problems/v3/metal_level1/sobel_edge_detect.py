"""Sobel gradient magnitude sqrt(gx^2 + gy^2 + 1e-8) of every channel of an image batch."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("sobel_x", torch.tensor(
            [[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]]).view(1, 1, 3, 3))
        self.register_buffer("sobel_y", torch.tensor(
            [[-1.0, -2.0, -1.0], [0.0, 0.0, 0.0], [1.0, 2.0, 1.0]]).view(1, 1, 3, 3))

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        B, C, H, W = image.shape
        x = image.view(B * C, 1, H, W)
        gx = F.conv2d(x, self.sobel_x, padding=1)
        gy = F.conv2d(x, self.sobel_y, padding=1)
        return torch.sqrt(gx ** 2 + gy ** 2 + 1e-8).view(B, C, H, W)


def get_inputs():
    image = torch.rand(2, 1, 128, 128)
    return [image]


def get_init_inputs():
    return []


OP_TYPE = "conv"
SUPPORTED_PRECISIONS = ["fp32"]
HARDWARE_REQUIRED = ["M4MAX"]
METAL_LEVEL = 1
