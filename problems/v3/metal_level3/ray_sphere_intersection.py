"""Nearest positive ray-sphere hit distance for each ray against 64 spheres (+inf where nothing is hit)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, ray_origins: torch.Tensor, ray_dirs: torch.Tensor, sphere_centers: torch.Tensor,
                sphere_radii: torch.Tensor) -> torch.Tensor:
        oc = ray_origins.unsqueeze(1) - sphere_centers.unsqueeze(0)
        a = (ray_dirs.unsqueeze(1) * ray_dirs.unsqueeze(1)).sum(dim=-1)
        b = 2.0 * (oc * ray_dirs.unsqueeze(1)).sum(dim=-1)
        c = (oc * oc).sum(dim=-1) - sphere_radii.unsqueeze(0) ** 2
        disc = b ** 2 - 4.0 * a * c
        hit = disc >= 0
        sqrt_disc = torch.sqrt(torch.clamp(disc, min=0.0))
        t = (-b - sqrt_disc) / (2.0 * a + 1e-8)
        # misses are +inf (see KNOWN_ISSUE)
        t_valid = torch.where(hit & (t > 0), t, torch.tensor(float("inf"), device=t.device))
        return t_valid.min(dim=1).values


def get_inputs():
    ray_origins = torch.randn(100000, 3)
    ray_dirs = F.normalize(torch.randn(100000, 3), dim=-1)
    sphere_centers = torch.randn(64, 3) * 5.0
    sphere_radii = torch.rand(64) * 2.0 + 0.5
    return [ray_origins, ray_dirs, sphere_centers, sphere_radii]


def get_init_inputs():
    return []


OP_TYPE = "geometry"
SUPPORTED_PRECISIONS = ["fp32"]
HARDWARE_REQUIRED = ["M4MAX"]
METAL_LEVEL = 3
KNOWN_ISSUE = ("Rays that hit no sphere in front of them return +inf, so the reference output contains Inf "
               "for typical inputs and the Metal grader, which rejects non-finite references, cannot pass it.")
