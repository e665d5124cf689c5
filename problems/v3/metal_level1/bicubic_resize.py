"""Bicubic downsampling of an image batch to a fixed size (align_corners=False, no antialiasing)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, output_h: int, output_w: int):
        super().__init__()
        self.output_h = output_h
        self.output_w = output_w

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        return F.interpolate(image, size=(self.output_h, self.output_w), mode="bicubic", align_corners=False)


def get_inputs():
    image = torch.randn(4, 3, 1024, 1024)
    return [image]


def get_init_inputs():
    return [512, 512]


OP_TYPE = "conv"
SUPPORTED_PRECISIONS = ["fp32"]
HARDWARE_REQUIRED = ["M4MAX"]
METAL_LEVEL = 1
