"""Mixed-precision GEMM: emulated FP8 A (int8 + fp32 scale) dequantised to fp16, times fp16 B."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a_q: torch.Tensor, b_fp16: torch.Tensor, scale_a: torch.Tensor) -> torch.Tensor:
        a16 = (a_q.to(torch.float32) * scale_a).to(torch.float16)
        return a16 @ b_fp16.to(torch.float16)


def get_inputs():
    a_q = torch.randint(-127, 127, (2048, 2048), dtype=torch.int8)
    b_fp16 = torch.randn(2048, 2048, dtype=torch.float16)
    scale_a = torch.tensor(0.01, dtype=torch.float32)
    return [a_q, b_fp16, scale_a]


def get_init_inputs():
    return []


OP_TYPE = "gemm"
SUPPORTED_PRECISIONS = ["fp8", "fp16"]
HARDWARE_REQUIRED = ["H100", "B200"]
SPECIALIZED_LEVEL = 1
