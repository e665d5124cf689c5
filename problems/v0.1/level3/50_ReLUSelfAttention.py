"""Causal self-attention with ReLU in place of softmax; the output projection is built but not applied."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
max_seqlen = 1024
n_embd = 768
n_head = 12

# c_proj is created (consumes RNG, in the state_dict) but never used.
QUIRKS = ["unused_parameters"]


class Model(nn.Module):
    def __init__(self, n_embd, n_head, max_seqlen):
        super().__init__()
        assert n_embd % n_head == 0
        # key, query, value projections for all heads, in a batch
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        # output projection (unused in forward)
        self.c_proj = nn.Linear(n_embd, n_embd)
        # causal mask: attend only to the left of each position (a persistent buffer)
        self.register_buffer("bias", torch.tril(torch.ones(max_seqlen, max_seqlen)).view(1, 1, max_seqlen, max_seqlen))
        self.n_head = n_head
        self.n_embd = n_embd

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)

        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.relu(att)  # masked entries (-inf) become 0

        y = att @ v  # (B, nh, T, hs)
        return y.transpose(1, 2).contiguous().view(B, T, C)


def get_inputs():
    return [torch.rand(batch_size, max_seqlen, n_embd)]


def get_init_inputs():
    return [n_embd, n_head, max_seqlen]
