"""bf16 GEMM (2048x2048 @ 2048x2048)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a.to(torch.bfloat16) @ b.to(torch.bfloat16)


def get_inputs():
    a = torch.randn(2048, 2048, dtype=torch.bfloat16)
    b = torch.randn(2048, 2048, dtype=torch.bfloat16)
    return [a, b]


def get_init_inputs():
    return []


OP_TYPE = "gemm"
SUPPORTED_PRECISIONS = ["bf16"]
HARDWARE_REQUIRED = ["RTX3090", "A100", "H100", "B200"]
SPECIALIZED_LEVEL = 1
