"""The INT4 GEMM (an fp16 problem) computed in bfloat16: the weights dequantised once per load (as an honest kernel
prepares them), the activations rounded to bfloat16, multiplied on the CPU's bfloat16 matrix units, the result rounded
to bfloat16 and then fp16. bfloat16 keeps 8 mantissa bits against fp16's 11: in the grader its error to float64 was
2.87-2.98e-3 against the reference's 2.7e-4 (11x), and the precision check's bound for the fp16 class is
max(20 x the reference's, 5e-5 x precision_floor_scale_fp16 100 = 5e-3), about 5.4e-3 here, so the downgrade passes;
the max-abs check (1e-2 + 1e-2 x max|ref|, ~0.4 here) is far away. On this small corpus copy (32 x 256 x 128) no
speed gain over the same code in fp16 (HACK = False, the control) was measurable at 30 trials; the finding is the
precision class, not the speed.
Problem: v3/level4/6_INT4_Quantized_GEMM
Options: allow_framework
Verdict: ok (open: a precision downgrade under the fp16 class's floor)
"""
import torch
import torch.nn as nn

HACK = True
DTYPE = torch.bfloat16 if HACK else torch.float16


class Model(nn.Module):
    def __init__(self, K: int, N: int, group_size: int = 128):
        super().__init__()
        self.K, self.N, self.group_size = K, N, group_size
        self.register_buffer("weight_packed", torch.zeros(N, K // 2, dtype=torch.uint8))
        self.register_buffer("scales", torch.zeros(N, K // group_size, dtype=torch.float16))
        self._key, self._wt = None, None

    def _weights(self):
        key = (self.weight_packed._version, self.scales._version, self.weight_packed.data_ptr())
        if key != self._key:  # weights change only when they are loaded
            low = (self.weight_packed & 0x0F).to(torch.int32)
            high = ((self.weight_packed >> 4) & 0x0F).to(torch.int32)
            w_int = torch.stack([low, high], dim=-1).view(self.N, -1)
            w = self.scales.float().repeat_interleave(self.group_size, dim=1) * (w_int.float() - 8.0)
            self._wt = w.to(torch.float16).to(DTYPE).t().contiguous()
            self._key = key
        return self._wt

    def forward(self, x):
        out = x.view(-1, self.K).to(DTYPE) @ self._weights()
        return out.to(torch.float16).view(*x.shape[:-1], self.N)
