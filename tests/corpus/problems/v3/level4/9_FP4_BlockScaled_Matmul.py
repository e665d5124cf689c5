"""FP4-style block-scaled GEMM: 4-bit weights (two per byte) with one fp16 scale per 32-element block, dequantised to fp16."""
import torch
import torch.nn as nn

BLOCK_SIZE = 32
K = 256
N = 256
batch_size = 2
seq_len = 16


class Model(nn.Module):
    def __init__(self, K: int, N: int):
        super().__init__()
        self.K = K
        self.N = N
        num_blocks = K // BLOCK_SIZE
        # quantise fixed weights from seed 1337 without disturbing the caller's RNG
        rng_state = torch.get_rng_state()
        torch.manual_seed(1337)
        w = torch.randn(N, K) * 0.02
        torch.set_rng_state(rng_state)
        blocks = w.view(N, num_blocks, BLOCK_SIZE)
        amax = blocks.abs().amax(dim=-1, keepdim=True).clamp(min=1e-12)
        s = amax / 7.0
        q = (torch.round(blocks / s).clamp(-7, 7) + 8).to(torch.uint8).view(N, K)  # [1, 15]
        packed = (q[:, 1::2] << 4) | q[:, 0::2]
        self.weight_packed = nn.Parameter(packed, requires_grad=False)
        # dequantisation uses the fp16-rounded scale
        self.scales = nn.Parameter(s.squeeze(-1).to(torch.float16), requires_grad=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        lo = (self.weight_packed & 0x0F).to(torch.int8) - 8
        hi = ((self.weight_packed >> 4) & 0x0F).to(torch.int8) - 8
        w_int = torch.stack([lo, hi], dim=-1).view(self.N, 2 * self.weight_packed.shape[1])[:, :self.K]
        num_blocks = self.scales.shape[1]
        w = w_int.view(self.N, num_blocks, BLOCK_SIZE).to(torch.float32) * self.scales.unsqueeze(-1).to(torch.float32)
        w_fp16 = w.view(self.N, -1)[:, :self.K].to(torch.float16)
        return torch.matmul(x, w_fp16.t())


def get_inputs():
    x = torch.randn(batch_size, seq_len, K, dtype=torch.float16)
    return [x]


def get_init_inputs():
    return [K, N]


OP_TYPE = "gemm"
SUPPORTED_PRECISIONS = ["fp4", "fp8", "fp16", "bf16", "fp32"]
HARDWARE_REQUIRED = ["B200"]
