"""ACES filmic tone mapping (Narkowicz fit) of an HDR image batch, clamped to [0, 1]."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, exposure: float):
        super().__init__()
        self.exposure = exposure

    def forward(self, hdr_image: torch.Tensor) -> torch.Tensor:
        x = hdr_image * self.exposure
        mapped = (x * (2.51 * x + 0.03)) / (x * (2.43 * x + 0.59) + 0.14)
        return torch.clamp(mapped, 0.0, 1.0)


def get_inputs():
    hdr_image = torch.rand(4, 3, 1024, 1024) * 5.0
    return [hdr_image]


def get_init_inputs():
    return [1.0]


OP_TYPE = "elementwise"
SUPPORTED_PRECISIONS = ["fp32"]
HARDWARE_REQUIRED = ["M4MAX"]
METAL_LEVEL = 3
