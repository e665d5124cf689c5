"""Standard matrix multiplication: C = A @ B with A (M, K) and B (K, N), fp32 (the corpus's copy at 640 x 640 x 640:
framework GEMM work a CPU's sampler sees, milliseconds a call, where the 128 x 128 copy of problem 1 is under it)."""
import torch
import torch.nn as nn

M = 640
K = 640
N = 640


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


def get_inputs():
    A = torch.randn(M, K)
    B = torch.randn(K, N)
    return [A, B]


def get_init_inputs():
    return []


OP_TYPE = "gemm"
SUPPORTED_PRECISIONS = ["fp4", "fp8", "fp16", "bf16", "fp32"]
HARDWARE_REQUIRED = ["RTX3090", "H100", "B200"]
