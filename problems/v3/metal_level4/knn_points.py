"""Brute-force k-nearest neighbours: indices of the 8 closest reference points for each query point."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, k: int):
        super().__init__()
        self.k = k

    def forward(self, query: torch.Tensor, reference: torch.Tensor) -> torch.Tensor:
        diff = query.unsqueeze(1) - reference.unsqueeze(0)
        dist_sq = (diff ** 2).sum(dim=-1)
        _, indices = torch.topk(dist_sq, self.k, dim=-1, largest=False)
        return indices


def get_inputs():
    query = torch.randn(4096, 3)
    reference = torch.randn(16384, 3)
    return [query, reference]


def get_init_inputs():
    return [8]


OP_TYPE = "geometry"
SUPPORTED_PRECISIONS = ["fp32"]
HARDWARE_REQUIRED = ["M4MAX"]
METAL_LEVEL = 4
