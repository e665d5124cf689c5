"""INT4 GEMM that bakes the packed int4 weights in at construction (seed 1337, as the problem draws them) and never reads a loaded weight_packed.
Problem: v3/level4/6_INT4_Quantized_GEMM
Verdict: rejected [ignores_weights]
Device: cpu
Found by the red team (session 12): weight_packed is a uint8 buffer and only floating state was perturbed, so every
load brought the same packed bytes. The submission keeps no weight_packed (the load reports it as unexpected, which
fails nothing), unpacks its own copy once and follows only the scales: wrong for any other quantised weights, and
graded ok. Quantised integer weights are now drawn again within their range with the secret weights.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, K, N, group_size=128):
        super().__init__()
        self.K, self.N, self.group_size = K, N, group_size
        state = torch.get_rng_state()
        torch.manual_seed(1337)
        packed = torch.randint(0, 256, (N, K // 2), dtype=torch.uint8)
        torch.set_rng_state(state)
        w_int = torch.stack([packed & 0x0F, (packed >> 4) & 0x0F], dim=-1).view(N, K).to(torch.float16) - 8.0
        self.register_buffer("w_int", w_int, persistent=False)   # never reloaded
        self.register_buffer("scales", torch.ones(N, K // group_size, dtype=torch.float16))

    def forward(self, x):
        w = (self.scales.repeat_interleave(self.group_size, dim=1) * self.w_int).float()
        xs = x.reshape(-1, self.K).float()
        out = (xs[:, None, :] * w[None, :, :]).sum(-1).to(torch.float16)
        return out.view(*x.shape[:-1], self.N)
