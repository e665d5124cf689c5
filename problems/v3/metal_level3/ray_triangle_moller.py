"""Moller-Trumbore ray-triangle intersection: nearest hit distance per ray over 128 triangles (+inf on miss)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, epsilon: float):
        super().__init__()
        self.epsilon = epsilon

    def forward(self, ray_origins: torch.Tensor, ray_dirs: torch.Tensor, v0: torch.Tensor, v1: torch.Tensor,
                v2: torch.Tensor) -> torch.Tensor:
        R, T = ray_origins.shape[0], v0.shape[0]
        edge1 = (v1 - v0).unsqueeze(0).expand(R, T, 3)
        edge2 = (v2 - v0).unsqueeze(0).expand(R, T, 3)
        dirs = ray_dirs.unsqueeze(1).expand(R, T, 3)
        h = torch.cross(dirs, edge2, dim=-1)
        a = (edge1 * h).sum(dim=-1)
        parallel = a.abs() < self.epsilon
        f = 1.0 / (a + self.epsilon)
        s = ray_origins.unsqueeze(1).expand(R, T, 3) - v0.unsqueeze(0).expand(R, T, 3)
        u = f * (s * h).sum(dim=-1)
        q = torch.cross(s, edge1, dim=-1)
        v = f * (dirs * q).sum(dim=-1)
        t = f * (edge2 * q).sum(dim=-1)
        valid = ~parallel & (u >= 0) & (v >= 0) & (u + v <= 1.0) & (t > self.epsilon)
        # misses are +inf (see KNOWN_ISSUE)
        t_valid = torch.where(valid, t, torch.tensor(float("inf"), device=t.device))
        return t_valid.min(dim=1).values


def get_inputs():
    ray_origins = torch.randn(50000, 3)
    ray_dirs = F.normalize(torch.randn(50000, 3), dim=-1)
    v0 = torch.randn(128, 3) * 5.0
    v1 = v0 + torch.randn(128, 3) * 0.5
    v2 = v0 + torch.randn(128, 3) * 0.5
    return [ray_origins, ray_dirs, v0, v1, v2]


def get_init_inputs():
    return [1e-07]


OP_TYPE = "geometry"
SUPPORTED_PRECISIONS = ["fp32"]
HARDWARE_REQUIRED = ["M4MAX"]
METAL_LEVEL = 3
KNOWN_ISSUE = ("Rays that hit no triangle return +inf (most random rays), so the reference output contains Inf "
               "and the Metal grader, which rejects non-finite references, cannot pass it.")
