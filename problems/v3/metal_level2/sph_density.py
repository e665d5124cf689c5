"""SPH density estimate with a cubic-spline kernel, summed over all particle pairs (self term included)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, smoothing_length: float, particle_mass: float):
        super().__init__()
        self.h = smoothing_length
        self.mass = particle_mass

    def forward(self, positions: torch.Tensor) -> torch.Tensor:
        norm_const = 8.0 / (3.14159265 * self.h ** 3)
        diff = positions.unsqueeze(0) - positions.unsqueeze(1)
        r = torch.sqrt((diff ** 2).sum(dim=-1) + 1e-10)
        q = r / self.h
        w = torch.zeros_like(q)
        mask1 = q <= 0.5
        mask2 = (q > 0.5) & (q <= 1.0)
        # boolean-mask assignment: data-dependent shapes
        w[mask1] = 1.0 - 6.0 * q[mask1] ** 2 + 6.0 * q[mask1] ** 3
        w[mask2] = 2.0 * (1.0 - q[mask2]) ** 3
        w = w * norm_const
        return (self.mass * w).sum(dim=1)


def get_inputs():
    positions = torch.randn(2048, 3)
    return [positions]


def get_init_inputs():
    return [0.1, 1.0]


OP_TYPE = "simulation"
SUPPORTED_PRECISIONS = ["fp32"]
HARDWARE_REQUIRED = ["M4MAX"]
METAL_LEVEL = 2
QUIRKS = ["data_dependent"]
