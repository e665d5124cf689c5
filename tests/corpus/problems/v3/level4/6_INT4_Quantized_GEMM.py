"""INT4 weight-only quantised GEMM: unpack two 4-bit weights per byte, dequantise with per-group fp16 scales, fp16 matmul."""
import torch
import torch.nn as nn

batch_size = 2
seq_len = 16
K = 256
N = 128
group_size = 64


class Model(nn.Module):
    def __init__(self, K: int, N: int, group_size: int = 128):
        super().__init__()
        self.K = K
        self.N = N
        self.group_size = group_size
        self.num_groups = K // group_size
        # fixed weights from seed 1337 without disturbing the caller's RNG
        rng_state = torch.get_rng_state()
        torch.manual_seed(1337)
        self.register_buffer("weight_packed", torch.randint(0, 256, (N, K // 2), dtype=torch.uint8))
        self.register_buffer("scales", torch.randn(N, self.num_groups, dtype=torch.float16).abs() * 0.1)
        torch.set_rng_state(rng_state)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # byte j holds column 2j in its low nibble and column 2j+1 in its high nibble
        low = (self.weight_packed & 0x0F).to(torch.int32)
        high = ((self.weight_packed >> 4) & 0x0F).to(torch.int32)
        w_int = torch.stack([low, high], dim=-1).view(self.N, -1)
        scales = self.scales.repeat_interleave(self.group_size, dim=1)
        w = scales * (w_int.to(torch.float16) - 8.0)
        out = x.view(-1, self.K) @ w.T
        return out.view(*x.shape[:-1], self.N)


def get_inputs():
    x = torch.randn(batch_size, seq_len, K, dtype=torch.float16)
    return [x]


def get_init_inputs():
    return [K, N, group_size]


OP_TYPE = "gemm"
SUPPORTED_PRECISIONS = ["fp4", "fp8", "fp16", "bf16", "fp32"]
HARDWARE_REQUIRED = ["RTX3090", "H100", "B200"]
