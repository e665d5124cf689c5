"""Screen-space ambient occlusion from a depth map and normals with a fixed 16-sample kernel."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, num_samples: int, radius: float, bias: float):
        super().__init__()
        self.num_samples = num_samples
        self.radius = radius
        self.bias = bias
        # deliberate side effect of the original: reseeds the global RNG (not restored)
        torch.manual_seed(42)
        kernel = F.normalize(torch.randn(num_samples, 3), dim=-1)
        kernel = kernel * torch.linspace(0.1, 1.0, num_samples).unsqueeze(1) * radius
        self.register_buffer("kernel", kernel)

    def forward(self, depth: torch.Tensor, normals: torch.Tensor) -> torch.Tensor:
        B, _, H, W = depth.shape
        occlusion = torch.zeros(B, 1, H, W, device=depth.device, dtype=depth.dtype)
        for s in range(self.num_samples):
            offset = self.kernel[s]
            off_depth = offset[2].abs() * self.radius
            sample_depth = depth + off_depth
            # (depth + c) - depth: a per-sample constant up to fp32 rounding
            occluded = (sample_depth - depth > self.bias).float()
            dot = torch.clamp(normals[:, 2:3] * offset[2], min=0.0)
            occlusion += occluded * dot
        return torch.clamp(1.0 - occlusion / self.num_samples, 0.0, 1.0)


def get_inputs():
    depth = torch.rand(2, 1, 512, 512) * 10.0
    normals = F.normalize(torch.randn(2, 3, 512, 512), dim=1)
    return [depth, normals]


def get_init_inputs():
    return [16, 0.5, 0.025]


OP_TYPE = "fused"
SUPPORTED_PRECISIONS = ["fp32"]
HARDWARE_REQUIRED = ["M4MAX"]
METAL_LEVEL = 3
QUIRKS = ["reseeds_global_rng"]
