"""One explicit-Euler step of a particle system with gravity and damped bounces off a [-10, 10]^3 box."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dt: float, damping: float, bounds: float):
        super().__init__()
        self.dt = dt
        self.damping = damping
        self.bounds = bounds

    def forward(self, positions: torch.Tensor, velocities: torch.Tensor) -> torch.Tensor:
        gravity = torch.tensor([0.0, -9.81, 0.0], device=positions.device)
        new_vel = velocities + gravity.unsqueeze(0) * self.dt
        new_pos = positions + new_vel * self.dt
        out_of_bounds = (new_pos > self.bounds) | (new_pos < -self.bounds)
        new_vel = torch.where(out_of_bounds, -new_vel * self.damping, new_vel)
        new_pos = torch.clamp(new_pos, -self.bounds, self.bounds)
        return torch.cat([new_pos, new_vel], dim=-1)


def get_inputs():
    positions = torch.randn(1000000, 3)
    velocities = torch.randn(1000000, 3)
    return [positions, velocities]


def get_init_inputs():
    return [0.016, 0.8, 10.0]


OP_TYPE = "simulation"
SUPPORTED_PRECISIONS = ["fp32"]
HARDWARE_REQUIRED = ["M4MAX"]
METAL_LEVEL = 2
