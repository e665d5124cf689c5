"""Emulated FP8 GEMM: int8-stored 8-bit values with per-tensor fp32 scales, fp32 matmul, fp16 output."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, m: int = 2048, n: int = 2048, k: int = 2048):
        super().__init__()
        # stored but unused
        self.m = m
        self.n = n
        self.k = k

    def forward(self, a_q: torch.Tensor, b_q: torch.Tensor, scale_a: torch.Tensor,
                scale_b: torch.Tensor) -> torch.Tensor:
        a_fp = a_q.to(torch.float32) * scale_a
        b_fp = b_q.to(torch.float32) * scale_b
        return (a_fp @ b_fp).to(torch.float16)


def get_inputs():
    a_q = torch.randint(-127, 127, (2048, 2048), dtype=torch.int8)
    b_q = torch.randint(-127, 127, (2048, 2048), dtype=torch.int8)
    scale_a = torch.tensor(0.01, dtype=torch.float32)
    scale_b = torch.tensor(0.01, dtype=torch.float32)
    return [a_q, b_q, scale_a, scale_b]


def get_init_inputs():
    return []


OP_TYPE = "gemm"
SUPPORTED_PRECISIONS = ["fp8"]
HARDWARE_REQUIRED = ["H100", "B200"]
SPECIALIZED_LEVEL = 1
