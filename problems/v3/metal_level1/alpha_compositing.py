"""Porter-Duff "over" compositing of an RGBA foreground onto an RGBA background (premultiplied alpha)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, foreground: torch.Tensor, background: torch.Tensor) -> torch.Tensor:
        fg_rgb, fg_a = foreground[:, 0:3], foreground[:, 3:4]
        bg_rgb, bg_a = background[:, 0:3], background[:, 3:4]
        out_a = fg_a + bg_a * (1.0 - fg_a)
        out_rgb = fg_rgb + bg_rgb * (1.0 - fg_a)
        return torch.cat([out_rgb, out_a], dim=1)


def get_inputs():
    foreground = torch.rand(8, 4, 1024, 1024)
    background = torch.rand(8, 4, 1024, 1024)
    return [foreground, background]


def get_init_inputs():
    return []


OP_TYPE = "elementwise"
SUPPORTED_PRECISIONS = ["fp32"]
HARDWARE_REQUIRED = ["M4MAX"]
METAL_LEVEL = 1
