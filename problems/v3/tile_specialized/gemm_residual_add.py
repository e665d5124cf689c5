"""fp16 GEMM (2048x2048 @ 2048x4096) followed by a residual add."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        # the GEMM result is rounded to fp16 before the add
        return (a.to(torch.float16) @ b.to(torch.float16)) + residual.to(torch.float16)


def get_inputs():
    a = torch.randn(2048, 2048, dtype=torch.float16)
    b = torch.randn(2048, 4096, dtype=torch.float16)
    residual = torch.randn(2048, 4096, dtype=torch.float16)
    return [a, b, residual]


def get_init_inputs():
    return []


OP_TYPE = "gemm_epilogue"
SUPPORTED_PRECISIONS = ["fp16", "bf16"]
HARDWARE_REQUIRED = ["H100", "B200"]
SPECIALIZED_LEVEL = 2
