"""The op-by-op LayerNorm with torch's intra-op threads raised to every core, while the judge gives each side half and
times the paired reference on its half (red team, session 25: ok at 0.35-0.41x against 0.21-0.23x for the same code
on its share; the record's trusted_cpu_ms stood at twice the claim). Open on the CPU until session 25 (SECURITY.md: CPU threads on a
CPU grading). Since then a CPU batch whose sandbox used more CPU than its cores' share of the round trip is timed
as its work takes on that share (`cpu_share_*` in rules): 0.19x against the same code's 0.23x.
Problem: v3/level1/40_LayerNorm
Verdict: unaffected
Device: cpu
"""
import os
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, x):
        if torch.get_num_threads() < (os.cpu_count() or 1):
            torch.set_num_threads(os.cpu_count() or 1)
        dims = tuple(range(1, x.dim()))
        mean = x.mean(dim=dims, keepdim=True)
        var = (x - mean).square().mean(dim=dims, keepdim=True)
        return (x - mean) * torch.rsqrt(var + self.ln.eps) * self.ln.weight + self.ln.bias
