"""Inclusive prefix sum along the last dimension of a (64, 1048576) fp32 matrix."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, data: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(data, dim=-1)


def get_inputs():
    data = torch.randn(64, 1048576)
    return [data]


def get_init_inputs():
    return []


OP_TYPE = "scan"
SUPPORTED_PRECISIONS = ["fp32"]
HARDWARE_REQUIRED = ["M4MAX"]
METAL_LEVEL = 4
