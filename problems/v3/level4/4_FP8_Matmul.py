"""FP8 (e4m3) GEMM: per-tensor dynamic quantisation of fp16 activations and fp32 weights, torch._scaled_mm, fp16 output."""
import torch
import torch.nn as nn

batch_size = 8
seq_len = 2048
M = batch_size * seq_len
K = 4096
N = 4096
use_e4m3 = True


class Model(nn.Module):
    def __init__(self, M: int, K: int, N: int, use_e4m3: bool = True):
        super().__init__()
        self.M = M  # stored, unused
        self.K = K
        self.N = N
        self.use_e4m3 = use_e4m3
        self.fp8_dtype = torch.float8_e4m3fn if use_e4m3 else torch.float8_e5m2
        self.fp8_max = 448.0 if use_e4m3 else 57344.0
        # fixed weights from seed 1337 without disturbing the caller's RNG
        rng_state = torch.get_rng_state()
        torch.manual_seed(1337)
        self.weight = nn.Parameter(torch.randn(K, N) * 0.02)
        torch.set_rng_state(rng_state)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x2 = x.view(-1, self.K)
        # per-tensor scales; the activation scale stays in x's dtype (fp16)
        x_scale = self.fp8_max / torch.clamp(x2.abs().max(), min=1e-12)
        w_scale = self.fp8_max / torch.clamp(self.weight.abs().max(), min=1e-12)
        x_fp8 = torch.clamp(x2 * x_scale, -self.fp8_max, self.fp8_max).to(self.fp8_dtype)
        w_fp8 = torch.clamp(self.weight.t().contiguous() * w_scale, -self.fp8_max, self.fp8_max).to(self.fp8_dtype)
        x_inv = (1.0 / x_scale).to(torch.float32)
        w_inv = 1.0 / w_scale
        out = torch._scaled_mm(x_fp8, w_fp8.t(), scale_a=x_inv, scale_b=w_inv, out_dtype=torch.float16)
        return out.view(*x.shape[:-1], self.N)


def get_inputs():
    x = torch.randn(batch_size, seq_len, K, dtype=torch.float16)
    return [x]


def get_init_inputs():
    return [M, K, N, use_e4m3]


OP_TYPE = "gemm"
SUPPORTED_PRECISIONS = ["fp4", "fp8", "fp16", "bf16", "fp32"]
HARDWARE_REQUIRED = ["H100", "B200"]
REQUIRES = ["cuda_fp8"]
