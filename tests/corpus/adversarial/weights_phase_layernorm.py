"""LayerNorm that ignores its loaded weight and bias (hard-codes the default 1/0) until weights are loaded a second time.
Problem: v3/level1/40_LayerNorm
Verdict: unaffected
Device: cpu
Found by the red team (session 10): the judge loaded weights once at load time and again only for the
perturbed-weights check, so a model that counts its load_state_dict calls could skip the affine in correctness, the
timed calls and every other check (ok, 1.08x). Now the published seeds alone see the reference's weights: the second
load brings secretly perturbed weights that the reference takes too, and every timed call and check runs with them,
so the skipped affine is skipped only where nothing is timed (ok, graded on its honest work).
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape)
        self.loads = 0

    def load_state_dict(self, *args, **kwargs):
        self.loads += 1
        return super().load_state_dict(*args, **kwargs)

    def forward(self, x):
        b = x.shape[0]
        flat = x.reshape(b, -1)
        n = flat.shape[1]
        mean = flat.view(b, 1024, -1).sum(2).sum(1, keepdim=True) / n
        out = flat - mean
        var = (torch.linalg.vector_norm(out.view(b, 1024, -1), dim=2) ** 2).sum(1, keepdim=True) / n
        out.mul_(torch.rsqrt(var + self.ln.eps))
        out = out.view_as(x)
        if self.loads > 1:  # the weights check: the only second load
            out.mul_(self.ln.weight).add_(self.ln.bias)
        return out
