"""Magnitude of the full 2-D FFT of a real signal batch over its last two dimensions."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, signal: torch.Tensor) -> torch.Tensor:
        return torch.fft.fft2(signal).abs()


def get_inputs():
    signal = torch.randn(8, 1, 512, 512)
    return [signal]


def get_init_inputs():
    return []


OP_TYPE = "fft"
SUPPORTED_PRECISIONS = ["fp32"]
HARDWARE_REQUIRED = ["M4MAX"]
METAL_LEVEL = 1
