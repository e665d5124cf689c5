"""FP4 block-scaled GEMM that bakes the packed 4-bit weights in at construction (seed 1337) and follows only the scales.
Problem: v3/level4/9_FP4_BlockScaled_Matmul
Verdict: rejected [ignores_weights]
Device: cpu
Found by the red team's second pass of session 12. The problem keeps its packed weights as a uint8 nn.Parameter (requires_grad=False), not a
buffer; `_state_kind` returns "keep" for any non-floating key in named_parameters() (the int redraw added for
int4_packed_weights_baked only reaches buffers), so the published, secret and weights-check loads all bring the
same packed bytes. The submission keeps no weight_packed (reported as unexpected, which fails nothing), unpacks
its own copy once and reads only `scales`: wrong for any other quantised weights. Observed on a small copy
(K=N=256, batch 2, seq 16, now in tests/corpus/problems): ok, correct, flags [], speedup 0.58x, weights_loaded
unexpected [weight_packed]. Loaded with other packed bytes, its output is off by 2.3 (reference max 1.9).
Now integer weights, parameters included, are shuffled with the secret weights: the same values in other places.
"""
import torch
import torch.nn as nn

BLOCK_SIZE = 32


class ModelNew(nn.Module):
    def __init__(self, K, N):
        super().__init__()
        self.K, self.N = K, N
        nb = K // BLOCK_SIZE
        state = torch.get_rng_state()
        torch.manual_seed(1337)
        w = torch.randn(N, K) * 0.02
        torch.set_rng_state(state)
        blocks = w.view(N, nb, BLOCK_SIZE)
        s = blocks.abs().amax(dim=-1, keepdim=True).clamp(min=1e-12) / 7.0
        q = torch.round(blocks / s).clamp(-7, 7)                       # the default packed weights, as integers
        self.register_buffer("w_int", q.view(N, K), persistent=False)  # never reloaded
        self.scales = nn.Parameter(s.squeeze(-1).to(torch.float16), requires_grad=False)

    def forward(self, x):
        nb = self.scales.shape[1]
        w = (self.w_int.view(self.N, nb, BLOCK_SIZE) * self.scales.unsqueeze(-1).float()).view(self.N, self.K)
        w = w.to(torch.float16).float()
        xs = x.reshape(-1, self.K).float()
        out = (xs[:, None, :] * w[None, :, :]).sum(-1).to(torch.float16)
        return out.view(*x.shape[:-1], self.N)
