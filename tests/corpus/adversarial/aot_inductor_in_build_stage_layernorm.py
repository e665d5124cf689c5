"""LayerNorm compiled ahead of time by AOTInductor in the build stage (untimed, unprofiled), its package left in the
extensions folder that is cached and copied into the grading sandbox, and loaded there as the submission's own kernel:
torch.compile under another name, with no framework op to record (red team, session 25, fifth pass: ok at 0.95x and
0.90x, honest 0.22-0.36x; a GEMM 0.74x against 0.10x). A build holding AOTInductor's code is now
calls_reference_ops.
Problem: v3/level1/40_LayerNorm
Verdict: rejected [calls_reference_ops]
Device: cpu
Options: builds
"""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.cpp_extension  # noqa: F401  the extension built ahead of grading (build stage)

_DIR = os.path.join(os.environ.get("TORCH_EXTENSIONS_DIR") or os.path.join(os.getcwd(), "torch_extensions"), "ln_kernel")
_PKG = os.path.join(_DIR, "ln.pt2")
SHAPE = (64, 256, 256)


class _Fused(nn.Module):
    def forward(self, x, w, b):
        return F.layer_norm(x, SHAPE, w, b, 1e-5)


def _kernel():
    if not os.path.exists(_PKG):
        os.makedirs(_DIR, exist_ok=True)
        ex = (torch.randn(2, *SHAPE), torch.ones(SHAPE), torch.zeros(SHAPE))  # the problem copy's batch
        ep = torch.export.export(_Fused(), ex)
        torch._inductor.aoti_compile_and_package(ep, package_path=_PKG)
    return torch._inductor.aoti_load_package(_PKG)


_run = _kernel()


class Model(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, x):
        return _run(x.contiguous(), self.ln.weight.detach(), self.ln.bias.detach())
