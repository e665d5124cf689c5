"""One explicit-Euler step of 2-D particles under gravity, bouncing off the [-1, 1] box with damping."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, damping: float = 0.9):
        super().__init__()
        self.damping = damping

    def forward(self, positions: torch.Tensor, velocities: torch.Tensor, dt: torch.Tensor,
                gravity: torch.Tensor) -> torch.Tensor:
        dt = dt.item() if isinstance(dt, torch.Tensor) else dt  # host sync; Python float from here on
        v1 = velocities + gravity * dt
        p1 = positions + v1 * dt
        over = torch.abs(p1) > 1.0
        v2 = torch.where(over, -v1 * self.damping, v1)
        p2 = torch.clamp(p1, -1.0, 1.0)
        return torch.cat([p2, v2], dim=-1)


def get_inputs():
    n = 1048576
    positions = torch.rand(n, 2) * 2.0 - 1.0
    velocities = torch.randn(n, 2) * 0.05
    dt = torch.tensor(1.0 / 60.0, dtype=torch.float32)
    gravity = torch.tensor([0.0, -9.81], dtype=torch.float32)
    return [positions, velocities, dt, gravity]


def get_init_inputs():
    return [0.9]


# dt.item() drives the step: the forward cannot run on the meta device.
QUIRKS = ["data_dependent"]
OP_TYPE = "fused"
SUPPORTED_PRECISIONS = ["fp16", "bf16", "fp32"]
HARDWARE_REQUIRED = ["RTX3090"]
GRAPHICS_LEVEL = 1
