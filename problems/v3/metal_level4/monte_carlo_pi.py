"""Monte Carlo estimate of pi from 10M uniform points in the unit square, returned as shape (1,)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, random_points: torch.Tensor) -> torch.Tensor:
        x = random_points[:, 0]
        y = random_points[:, 1]
        inside = (x ** 2 + y ** 2 <= 1.0).float()
        return (4.0 * inside.mean()).unsqueeze(0)


def get_inputs():
    random_points = torch.rand(10000000, 2)
    return [random_points]


def get_init_inputs():
    return []


OP_TYPE = "reduction"
SUPPORTED_PRECISIONS = ["fp32"]
HARDWARE_REQUIRED = ["M4MAX"]
METAL_LEVEL = 4
