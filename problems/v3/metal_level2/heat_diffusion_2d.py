"""Ten explicit steps of 2-D heat diffusion (5-point Laplacian, replicate borders) on a grid batch."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, alpha: float, num_steps: int):
        super().__init__()
        self.alpha = alpha
        self.num_steps = num_steps

    def forward(self, grid: torch.Tensor) -> torch.Tensor:
        u = grid.clone()
        for _ in range(self.num_steps):
            p = F.pad(u, (1, 1, 1, 1), mode="replicate")
            left = p[:, :, 1:-1, :-2]
            right = p[:, :, 1:-1, 2:]
            up = p[:, :, :-2, 1:-1]
            down = p[:, :, 2:, 1:-1]
            u = u + self.alpha * (left + right + up + down - 4.0 * u)
        return u


def get_inputs():
    # deterministic: a hot 16x16 square in the middle, no RNG
    grid = torch.zeros(4, 1, 512, 512)
    grid[:, :, 248:264, 248:264] = 1.0
    return [grid]


def get_init_inputs():
    return [0.25, 10]


OP_TYPE = "stencil"
SUPPORTED_PRECISIONS = ["fp32"]
HARDWARE_REQUIRED = ["M4MAX"]
METAL_LEVEL = 2
