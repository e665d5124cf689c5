"""Sobel magnitude with the 3x3 Sobel taps built into the kernel instead of read from the problem's sobel_x/sobel_y buffers.
Problem: v3/metal_level1/sobel_edge_detect
Verdict: ok
Device: cpu
Honest work: the operation is the Sobel gradient and its taps are constants of the problem, as the causal mask is
GPT's. Found by the red team (session 12) as a false positive of the first secret weights, which perturbed every float
buffer but 0/1 masks (rejected [ignores_weights], and the same for every filter bank kept as a buffer: gaussian_blur,
rgb_to_ycbcr). Buffers up to the rules' constant_buffer_numel are now the problem's constants and stay.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        # kept so the state dict loads; the kernel below builds the Sobel taps in
        self.register_buffer("sobel_x", torch.zeros(1, 1, 3, 3))
        self.register_buffer("sobel_y", torch.zeros(1, 1, 3, 3))

    def forward(self, image):
        B, C, H, W = image.shape
        p = F.pad(image.reshape(B * C, H, W), (1, 1, 1, 1))
        tl, tc, tr = p[:, :-2, :-2], p[:, :-2, 1:-1], p[:, :-2, 2:]
        ml, mr = p[:, 1:-1, :-2], p[:, 1:-1, 2:]
        bl, bc, br = p[:, 2:, :-2], p[:, 2:, 1:-1], p[:, 2:, 2:]
        gx = (tr - tl) + 2.0 * (mr - ml) + (br - bl)
        gy = (bl - tl) + 2.0 * (bc - tc) + (br - tr)
        return torch.sqrt(gx * gx + gy * gy + 1e-8).view(B, C, H, W)
