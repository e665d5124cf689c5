"""Ascending sort of each row of a (32, 262144) fp32 matrix (values only)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, data: torch.Tensor) -> torch.Tensor:
        return torch.sort(data).values


def get_inputs():
    data = torch.randn(32, 262144)
    return [data]


def get_init_inputs():
    return []


OP_TYPE = "sort"
SUPPORTED_PRECISIONS = ["fp32"]
HARDWARE_REQUIRED = ["M4MAX"]
METAL_LEVEL = 4
