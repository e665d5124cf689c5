"""Sphere tracing of rays against the signed distance field of 32 spheres (64 fixed marching steps)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, max_steps: int, max_dist: float, epsilon: float):
        super().__init__()
        self.max_steps = max_steps
        self.max_dist = max_dist
        self.epsilon = epsilon

    def forward(self, ray_origins: torch.Tensor, ray_dirs: torch.Tensor, sphere_centers: torch.Tensor,
                sphere_radii: torch.Tensor) -> torch.Tensor:
        t = torch.zeros(ray_origins.shape[0], device=ray_origins.device, dtype=ray_origins.dtype)
        for _ in range(self.max_steps):
            pos = ray_origins + t.unsqueeze(-1) * ray_dirs
            dists = torch.sqrt(((pos.unsqueeze(1) - sphere_centers.unsqueeze(0)) ** 2).sum(dim=-1))
            dists = dists - sphere_radii.unsqueeze(0)
            sdf = dists.min(dim=1).values
            # rays starting inside a sphere have sdf < 0 and never move
            marching = (sdf > self.epsilon) & (t < self.max_dist)
            t = t + sdf * marching.float()
        return t


def get_inputs():
    ray_origins = torch.zeros(100000, 3)
    ray_origins[:, 2] = -5.0
    ray_dirs = F.normalize(torch.randn(100000, 3) * 0.1 + torch.tensor([0.0, 0.0, 1.0]), dim=-1)
    sphere_centers = torch.randn(32, 3) * 3.0
    sphere_radii = torch.rand(32) * 1.0 + 0.3
    return [ray_origins, ray_dirs, sphere_centers, sphere_radii]


def get_init_inputs():
    return [64, 50.0, 0.001]


OP_TYPE = "geometry"
SUPPORTED_PRECISIONS = ["fp32"]
HARDWARE_REQUIRED = ["M4MAX"]
METAL_LEVEL = 3
