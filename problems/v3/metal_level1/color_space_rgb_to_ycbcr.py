"""RGB to YCbCr (BT.601, full range) colour conversion as a per-pixel 3x3 matrix plus offset."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("transform", torch.tensor([
            [0.299, 0.587, 0.114],
            [-0.168736, -0.331264, 0.5],
            [0.5, -0.418688, -0.081312],
        ], dtype=torch.float32))
        self.register_buffer("offset", torch.tensor([0.0, 0.5, 0.5], dtype=torch.float32))

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        B, C, H, W = image.shape
        pixels = image.permute(0, 2, 3, 1).reshape(-1, 3)
        ycbcr = pixels @ self.transform.T + self.offset
        # returned as a non-contiguous view, like the original
        return ycbcr.view(B, H, W, 3).permute(0, 3, 1, 2)


def get_inputs():
    image = torch.rand(8, 3, 1024, 1024)
    return [image]


def get_init_inputs():
    return []


OP_TYPE = "elementwise"
SUPPORTED_PRECISIONS = ["fp32"]
HARDWARE_REQUIRED = ["M4MAX"]
METAL_LEVEL = 1
