"""All-pairs softened gravitational forces on N bodies (direct O(N^2) summation)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, softening: float, G: float):
        super().__init__()
        self.softening = softening
        self.G = G

    def forward(self, positions: torch.Tensor, masses: torch.Tensor) -> torch.Tensor:
        diff = positions.unsqueeze(0) - positions.unsqueeze(1)
        dist_sq = (diff ** 2).sum(dim=-1) + self.softening ** 2
        inv_dist3 = dist_sq ** -1.5
        fmag = self.G * masses.unsqueeze(0) * inv_dist3
        return (fmag.unsqueeze(-1) * diff).sum(dim=1)


def get_inputs():
    positions = torch.randn(4096, 3)
    masses = torch.rand(4096).abs() + 0.1
    return [positions, masses]


def get_init_inputs():
    return [0.01, 1.0]


OP_TYPE = "simulation"
SUPPORTED_PRECISIONS = ["fp32"]
HARDWARE_REQUIRED = ["M4MAX"]
METAL_LEVEL = 2
