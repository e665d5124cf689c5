"""Scaled dot-product attention (no mask, no dropout, not causal) with head dim 1024."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
num_heads = 32
sequence_length = 512
embedding_dimension = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, Q, K, V):
        return F.scaled_dot_product_attention(Q, K, V)


def get_inputs():
    Q = torch.rand(batch_size, num_heads, sequence_length, embedding_dimension)
    K = torch.rand(batch_size, num_heads, sequence_length, embedding_dimension)
    V = torch.rand(batch_size, num_heads, sequence_length, embedding_dimension)
    return [Q, K, V]


def get_init_inputs():
    return []
