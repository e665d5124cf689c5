"""FALSE POSITIVE (honest kernel). The Sobel gradients by the convolution theorem: the zero-padded image and the two
3 x 3 taps (built in, as honest/sobel_baked_taps does) to the frequency domain with torch.fft, multiplied, back, and
the magnitude sqrt(gx^2 + gy^2 + 1e-8). Exact in real arithmetic, deterministic (equal inputs give bitwise equal
outputs), close to float64 (FFT round-off is a few ulps of the image's largest values); no op of the convolution
family or of its substitutes (GEMM, attention) runs. The timed bitwise repeat redraws one pixel and requires the
outputs to be bitwise equal outside the 3 x 3 neighbourhood the reference's forward-mode tangent reaches there; a
transform spreads every pixel over every frequency, so every output moves in its last bits, which the check reads
as nondeterminism.
Problem: v3/metal_level1/sobel_edge_detect
Verdict: ok
Device: cpu
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        # kept so the state dict loads; the taps are constants of the problem, built in below
        self.register_buffer("sobel_x", torch.zeros(1, 1, 3, 3))
        self.register_buffer("sobel_y", torch.zeros(1, 1, 3, 3))
        self._spec = {}

    def _taps(self, H, W, dtype):
        key = (H, W, dtype)
        if key not in self._spec:
            kx = torch.tensor([[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]], dtype=dtype)
            ky = torch.tensor([[-1.0, -2.0, -1.0], [0.0, 0.0, 0.0], [1.0, 2.0, 1.0]], dtype=dtype)
            out = []
            for k in (kx, ky):
                z = torch.zeros(H, W, dtype=dtype)
                z[:3, :3] = k.flip(0).flip(1)  # correlation as a convolution with the flipped taps
                out.append(torch.fft.rfft2(z))
            self._spec[key] = out
        return self._spec[key]

    def forward(self, image):
        B, C, H, W = image.shape
        xp = torch.zeros(B * C, H + 2, W + 2, dtype=image.dtype)
        xp[:, 1:-1, 1:-1] = image.reshape(B * C, H, W)
        fx, fy = self._taps(H + 2, W + 2, image.dtype)
        X = torch.fft.rfft2(xp)
        gx = torch.fft.irfft2(X * fx, s=(H + 2, W + 2))[:, 2:, 2:]
        gy = torch.fft.irfft2(X * fy, s=(H + 2, W + 2))[:, 2:, 2:]
        return torch.sqrt(gx * gx + gy * gy + 1e-8).reshape(B, C, H, W)
