"""DeepSeek MoE that never reads the gate's e_score_correction_bias (hard-codes it to zero, its default init).
Problem: v3/level4/2_DeepSeek_MoE
Verdict: unaffected
Device: cpu
Found by the red team (session 12): the bias is a float buffer of zeros, which the first secret weights took for a 0/1
mask and never perturbed. Under today's rule it is a constant of the problem (a buffer of 64 values, under the rules'
constant_buffer_numel, as filter taps are), like a causal mask an honest kernel may build in: dropping a zero term
gains nothing (graded on its own work, unaffected). With any nonzero bias loaded the routing would be wrong; a
problem whose small buffers are real weights would have to say so (SECURITY.md, residual risks). Framework ops of the
forbidden families (mm, bmm, topk, silu) are avoided so that only the weights question decides.
"""
import torch
import torch.nn as nn


def _topk_idx(s, k):
    s = s.clone()
    out = []
    for _ in range(k):
        i = s.argmax(dim=-1, keepdim=True)
        out.append(i)
        s.scatter_(-1, i, float("-inf"))
    return torch.cat(out, dim=-1)


def _lin(x, w):  # x (N, h), w (o, h) -> (N, o)
    return (x[:, None, :] * w[None, :, :]).sum(-1)


class _Gate(nn.Module):
    def __init__(self, h, e):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(e, h))
        self.register_buffer("e_score_correction_bias", torch.zeros(e))  # loaded, never read


class _Lin(nn.Module):
    def __init__(self, i, o):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(o, i))


class Model(nn.Module):
    def __init__(self, hidden_size, intermediate_size, n_routed_experts, num_experts_per_tok, n_group, topk_group,
                 n_shared_experts, routed_scaling_factor):
        super().__init__()
        self.h, self.e, self.k = hidden_size, n_routed_experts, num_experts_per_tok
        self.g, self.tg, self.scale = n_group, topk_group, routed_scaling_factor
        self.gate_proj = nn.Parameter(torch.empty(n_routed_experts, intermediate_size, hidden_size))
        self.up_proj = nn.Parameter(torch.empty(n_routed_experts, intermediate_size, hidden_size))
        self.down_proj = nn.Parameter(torch.empty(n_routed_experts, hidden_size, intermediate_size))
        self.gate = _Gate(hidden_size, n_routed_experts)
        sd = intermediate_size * n_shared_experts
        self.shared_gate_proj = _Lin(hidden_size, sd)
        self.shared_up_proj = _Lin(hidden_size, sd)
        self.shared_down_proj = _Lin(sd, hidden_size)

    def forward(self, hidden_states):
        shape = hidden_states.shape
        x = hidden_states.reshape(-1, self.h)
        n = x.shape[0]
        scores = torch.sigmoid(_lin(x, self.gate.weight))
        choice = scores  # + e_score_correction_bias, which the grader never perturbs away from zero
        grouped = choice.view(n, self.g, -1)
        top2 = grouped.max(-1).values + grouped.scatter(-1, grouped.argmax(-1, keepdim=True), float("-inf")).max(-1).values
        gsel = _topk_idx(top2, self.tg)
        gmask = torch.zeros_like(top2).scatter_(1, gsel, 1.0)
        smask = gmask[:, :, None].expand(n, self.g, self.e // self.g).reshape(n, -1)
        idx = _topk_idx(choice.masked_fill(smask == 0, 0.0), self.k)
        w = scores.gather(1, idx)
        w = w / (w.sum(-1, keepdim=True) + 1e-20) * self.scale
        flat = idx.reshape(-1)
        xr = x[:, None, :].expand(n, self.k, self.h).reshape(-1, self.h)
        g = (self.gate_proj[flat] * xr[:, None, :]).sum(-1)
        u = (self.up_proj[flat] * xr[:, None, :]).sum(-1)
        inter = g * torch.sigmoid(g) * u
        eo = (self.down_proj[flat] * inter[:, None, :]).sum(-1).view(n, self.k, self.h)
        y = (eo * w[..., None]).sum(1)
        sg = _lin(x, self.shared_gate_proj.weight)
        sh = _lin(sg * torch.sigmoid(sg) * _lin(x, self.shared_up_proj.weight), self.shared_down_proj.weight)
        return (y + sh).view(shape)
