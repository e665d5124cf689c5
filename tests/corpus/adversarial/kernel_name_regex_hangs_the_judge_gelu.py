"""GELU by the framework's own F.gelu (the barred activation family: rejected [calls_reference_ops] on its own), plus
one comment line: "# __global__ " followed by 48 word characters and a "!". Red team, session 42b (CPU, strong
sandbox; the code path is the same on a GPU).
harness/profiled.py `_CUDA_KERNEL_DEF` = r"__global__\\s+(?:(?:__launch_bounds__\\s*\\([^)]*\\)|[\\w:<>*&]+)\\s*)*?...(\\w+)\\s*\\("
nests a `+` inside a `*?` with an optional separator: a run of n word characters that is not followed by "(" is
split every way before the match fails, 2**n steps (22 characters: 0.86 s; each one more doubles it). The judge runs
it on the submission's source in `profile_checks` -> `own_kernels` -> `declared_kernels`, after the timed loop and
before any op family is judged, and never returns: the worker's limit (timeout_s + 120 s: 12 minutes by default)
kills it and the record is `timeout`, which RewardPolicy pays 0.0 instead of -1.0. The worker, and a GPU with it,
is held for those 12 minutes by one comment. No native code, no build, no sampler.
Problem: v3/level1/26_GELU_
Verdict: rejected [calls_reference_ops]
"""
import torch.nn as nn
import torch.nn.functional as F

# __global__ abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuv!


class Model(nn.Module):
    def forward(self, x):
        return F.gelu(x)
