"""Per-plane histogram equalisation (256 bins) of an image batch with values in [0, 1]."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_bins: int):
        super().__init__()
        self.num_bins = num_bins

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        B, C, H, W = image.shape
        out = torch.empty_like(image)
        for b in range(B):
            for c in range(C):
                q = (image[b, c].clamp(0.0, 1.0) * 255).long()
                hist = torch.bincount(q.flatten(), minlength=self.num_bins).float()
                cdf = torch.cumsum(hist, dim=0)
                cdf_min = cdf[cdf > 0].min()
                cdf_norm = (cdf - cdf_min) / (H * W - cdf_min + 1e-8)
                out[b, c] = cdf_norm[q]
        return out


def get_inputs():
    image = torch.rand(4, 1, 512, 512)
    return [image]


def get_init_inputs():
    return [256]


OP_TYPE = "reduction"
SUPPORTED_PRECISIONS = ["fp32"]
HARDWARE_REQUIRED = ["M4MAX"]
METAL_LEVEL = 1
QUIRKS = ["data_dependent"]
