"""Skinny bf16 GEMV-style product: x (32x4096) @ weight^T (4096x14336), weight-bandwidth bound."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features: int = 4096, out_features: int = 14336):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features, dtype=torch.bfloat16) * 0.02)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.to(torch.bfloat16)
        return x @ self.weight.t()


def get_inputs():
    x = torch.randn(32, 4096, dtype=torch.bfloat16)
    return [x]


def get_init_inputs():
    return []


OP_TYPE = "gemv"
SUPPORTED_PRECISIONS = ["bf16"]
HARDWARE_REQUIRED = ["RTX3090", "A100", "H100", "B200"]
SPECIALIZED_LEVEL = 1
