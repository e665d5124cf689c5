"""Matmul_Scaling_ResidualAdd with float16 products (inside the fp32 tolerance, ~4e-4 from float64 where the
reference is ~1e-7), which holds almost all free GPU memory from its first timed call on, leaving room for the
judge's float32 work and its weights check (2x the weights) but not for the float64 reference copy (3x): the
judge's `.double()` raises CUDA out-of-memory, _fp64_errors catches every Exception and returns "the float64
reference cannot run", and precision_check records that and passes, for the timed float64 calls too.
Problem: v3/level2/40_Matmul_Scaling_ResidualAdd
Verdict: rejected [precision_downgrade] (or check_failed)
Device: cuda
Options: allow_framework
NOT graded on a GPU in this pass (no device time was left). Graded on the CPU by rt_sim_fp64_oom.py, which makes the
judge's float64 reference copy raise torch.cuda.OutOfMemoryError as a starved GPU would: status ok, no flag.
There is no GPU memory limit per process (SECURITY.md, The GPU is shared); an OOM in any other check is
check_failed (checks.dynamic_checks), but the float64 one swallows it as a property of the problem.
"""
import sys

import torch
import torch.nn as nn

_hog = []


def _starve(weight_bytes: int) -> None:
    """Hold the GPU's free memory but ~2.3x the weights (ref_p + its weight slots fit; rebuild + .double() don't)."""
    if _hog or not torch.cuda.is_available():
        return
    f = sys._getframe(2)
    while f is not None and f.f_code.co_name != "cmd_timed":
        f = f.f_back
    if f is None:  # from the first timed call on: the batch's slots are all allocated by then
        return
    free, _ = torch.cuda.mem_get_info()
    take = free - int(2.3 * weight_bytes) - (256 << 20)
    if take > 0:
        _hog.append(torch.empty(take, dtype=torch.uint8, device="cuda"))


class Model(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        w, b = self.matmul.weight, self.matmul.bias
        y = torch.matmul(x.half(), w.half().t()).float() if x.is_cuda else \
            torch.matmul(x.half().float(), w.half().float().t())  # float16-rounded operands, fp32 accumulation
        _starve(w.numel() * w.element_size())
        return (y + b) * (1.0 + self.scaling_factor)
