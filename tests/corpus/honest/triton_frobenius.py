"""Frobenius normalisation in Triton, deterministic: block sums of squares, one program that adds the block sums in a
fixed order, then the division. v0.1 FrobeniusNorm's input is 7.5 GB, the largest tensor of the suites: an honest
kernel must be gradeable there, with the judge, the reference and the candidate sharing one GPU.
Problem: v0.1/level1/37_FrobeniusNorm_
Verdict: ok
Device: cuda
GPU memory: 80
On an 80 GB H100 it needs 73.4 GB of the card at its peak (nvidia-smi, session 30: ok 1.14x); before the timed loop
stopped holding the last batch's calls (session 29) the judge ran out of memory there in its timing stage.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def block_sumsq(x_ptr, part_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.store(part_ptr + pid, tl.sum(x * x, axis=0))


@triton.jit
def total_norm(part_ptr, norm_ptr, parts, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, parts, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(part_ptr + offs, mask=offs < parts, other=0.0)
    tl.store(norm_ptr, tl.sqrt(tl.sum(acc, axis=0)))


@triton.jit
def divide(x_ptr, norm_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    norm = tl.load(norm_ptr)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask) / norm, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        n = x.numel()
        parts = triton.cdiv(n, 16384)
        part = torch.empty(parts, device=x.device, dtype=torch.float32)
        norm = torch.empty(1, device=x.device, dtype=torch.float32)
        block_sumsq[(parts,)](x, part, n, BLOCK=16384)
        total_norm[(1,)](part, norm, parts, BLOCK=1024)
        y = torch.empty_like(x)
        divide[(triton.cdiv(n, 4096),)](x, norm, y, n, BLOCK=4096)
        return y
