"""LayerNorm: a C++ extension computing the row statistics and the affine transform with the CPU's vectorized
per-ISA LayerNorm kernel entry (one pass over each row, weights and bias fused).
The framework's LayerNorm kernel reached through its dispatch stub's name, which the build-link reading did not
know (red team, session 25, sixth pass: ok at 0.90-0.99x against 0.21-0.22x for the op-by-op LayerNorm). Since session
26 the kernel samples every thread's instruction pointers during the timed batches: CPU time in torch's kernels past
the harness's own that the profile's ops do not cover is `profile_mismatch`.
Problem: v3/level1/40_LayerNorm
Verdict: rejected [profile_mismatch]
Device: cpu
Options: builds, needs_sampler
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>
#include <ATen/native/layer_norm.h>

torch::Tensor ln(torch::Tensor x, torch::Tensor w, torch::Tensor b, int64_t n, double eps) {
  auto X = x.contiguous();
  const int64_t N = n, M = X.numel() / n;
  auto Y = torch::empty_like(X);
  auto mean = torch::empty({M}, X.options());
  auto rstd = torch::empty({M}, X.options());
  using S = at::native::LayerNormKernel_DECLARE_DISPATCH_type;
  at::native::forward_fn k = S::AVX512 ? S::AVX512 : (S::AVX2 ? S::AVX2 : S::DEFAULT);
  k(X, w.contiguous(), b.contiguous(), M, N, eps, &Y, &mean, &rstd);
  return Y;
}
"""

_ext = load_inline("rowstat_ln_cpu3", cpp_sources=_SRC, functions=["ln"], extra_cflags=["-O2", "-DHAVE_AVX512_CPU_DEFINITION", "-DHAVE_AVX2_CPU_DEFINITION"], verbose=False)


class Model(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, x):
        w, b = self.ln.weight.detach(), self.ln.bias.detach()
        return _ext.ln(x, w, b, w.numel(), self.ln.eps)
