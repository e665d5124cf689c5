"""Edge-preserving bilateral filter (5x5 window, Gaussian spatial and range weights) on an image batch."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, kernel_size: int, sigma_spatial: float, sigma_range: float):
        super().__init__()
        self.kernel_size = kernel_size
        self.sigma_spatial = sigma_spatial
        self.sigma_range = sigma_range
        self.pad = kernel_size // 2

    def _weight(self, image, neighbor, dy, dx):
        # spatial weight: exp of a 0-dim fp32 tensor; range weight: elementwise on the image
        spatial_w = torch.exp(torch.tensor(-((dy - self.pad) ** 2 + (dx - self.pad) ** 2)
                                           / (2 * self.sigma_spatial ** 2), device=image.device))
        range_w = torch.exp(-(image - neighbor) ** 2 / (2 * self.sigma_range ** 2))
        return spatial_w * range_w

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        H, W = image.shape[2], image.shape[3]
        padded = F.pad(image, (self.pad, self.pad, self.pad, self.pad), mode="reflect")
        # the weights are deliberately computed twice: once for the weighted sum, once for the normaliser
        output = torch.zeros_like(image)
        for dy in range(self.kernel_size):
            for dx in range(self.kernel_size):
                neighbor = padded[:, :, dy:dy + H, dx:dx + W]
                output += self._weight(image, neighbor, dy, dx) * neighbor
        norm = torch.zeros_like(image)
        for dy in range(self.kernel_size):
            for dx in range(self.kernel_size):
                neighbor = padded[:, :, dy:dy + H, dx:dx + W]
                norm += self._weight(image, neighbor, dy, dx)
        return output / (norm + 1e-8)


def get_inputs():
    image = torch.rand(4, 3, 512, 512)
    return [image]


def get_init_inputs():
    return [5, 2.0, 0.1]


OP_TYPE = "conv"
SUPPORTED_PRECISIONS = ["fp32"]
HARDWARE_REQUIRED = ["M4MAX"]
METAL_LEVEL = 1
