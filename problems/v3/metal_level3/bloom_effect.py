"""Bloom post-process: threshold bright pixels, box-blur them three times, add back scaled, clamp to [0, 10]."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, threshold: float, intensity: float, blur_passes: int, blur_kernel: int):
        super().__init__()
        self.threshold = threshold
        self.intensity = intensity
        self.blur_passes = blur_passes
        self.blur_kernel = blur_kernel
        self.padding = blur_kernel // 2

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        blurred = F.relu(image - self.threshold)
        for _ in range(self.blur_passes):
            blurred = F.avg_pool2d(blurred, self.blur_kernel, stride=1, padding=self.padding)
        return torch.clamp(image + self.intensity * blurred, 0.0, 10.0)


def get_inputs():
    image = torch.randn(2, 3, 1024, 1024).abs() * 2.0
    return [image]


def get_init_inputs():
    return [1.0, 0.6, 3, 9]


OP_TYPE = "fused"
SUPPORTED_PRECISIONS = ["fp16", "fp32"]
HARDWARE_REQUIRED = ["M4MAX"]
METAL_LEVEL = 3
