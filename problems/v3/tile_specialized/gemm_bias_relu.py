"""fp16 GEMM (2048x2048 @ 2048x4096) with a bias-add + ReLU epilogue."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, n: int = 4096):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(n, dtype=torch.float16) * 0.02)

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        c = a.to(torch.float16) @ b.to(torch.float16)
        return F.relu(c + self.bias)


def get_inputs():
    a = torch.randn(2048, 2048, dtype=torch.float16)
    b = torch.randn(2048, 4096, dtype=torch.float16)
    return [a, b]


def get_init_inputs():
    return []


OP_TYPE = "gemm_epilogue"
SUPPORTED_PRECISIONS = ["fp16", "bf16"]
HARDWARE_REQUIRED = ["H100", "B200"]
SPECIALIZED_LEVEL = 2
