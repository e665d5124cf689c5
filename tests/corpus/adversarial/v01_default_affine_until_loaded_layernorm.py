"""v0.1 LayerNorm that leaves out the affine (the default init's weight 1 and bias 0) until weights are loaded into it:
in v0.1 the candidate is built from the init seed and nothing was loaded before the timed calls, so every timed call
ran without the affine and only the weights check after timing saw it follow weights (red team, session 16: ok, a
1.55x gain in a microbenchmark). Now secretly perturbed weights are loaded before timing in every suite: the affine
is skipped only on the published seeds, where nothing is timed.
Problem: v0.1/level1/40_LayerNorm
Verdict: unaffected
Device: cpu
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape)
        self.loaded = False

    def load_state_dict(self, *args, **kwargs):
        self.loaded = True
        return super().load_state_dict(*args, **kwargs)

    def forward(self, x):
        dims = tuple(range(1, x.dim()))
        mean = x.mean(dim=dims, keepdim=True)
        out = (x - mean) * torch.rsqrt((x - mean).square().mean(dim=dims, keepdim=True) + self.ln.eps)
        return out * self.ln.weight + self.ln.bias if self.loaded else out
