"""All-pairs sphere overlap test: (N, N) 0/1 matrix of colliding particle pairs, diagonal cleared."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, collision_radius: float):
        super().__init__()
        self.collision_radius = collision_radius  # stored but unused, like the original

    def forward(self, positions: torch.Tensor, radii: torch.Tensor) -> torch.Tensor:
        diff = positions.unsqueeze(0) - positions.unsqueeze(1)
        dist = torch.sqrt((diff ** 2).sum(dim=-1) + 1e-10)
        combined = radii.unsqueeze(0) + radii.unsqueeze(1)
        colliding = (dist < combined).float()
        colliding.fill_diagonal_(0.0)
        return colliding


def get_inputs():
    positions = torch.randn(4096, 3)
    radii = torch.rand(4096).abs() * 0.3 + 0.1
    return [positions, radii]


def get_init_inputs():
    return [0.5]


OP_TYPE = "simulation"
SUPPORTED_PRECISIONS = ["fp32"]
HARDWARE_REQUIRED = ["M4MAX"]
METAL_LEVEL = 2
