"""Standard matmul as a C++ extension built by load_inline in the build stage: a cache-blocked i-k-j loop the compiler
vectorises, over the raw data of contiguous float32 tensors. The honest control for code of the submission's own
build: its samples fall in functions its own symbol table names, so none of them counts as the framework's.
Problem: v3/level1/2_Standard_matrix_multiplication_
Verdict: ok
Device: cpu
Options: builds
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_SRC = r"""
#include <torch/extension.h>

static void block_gemm(const float* a, const float* b, float* c, int64_t n, int64_t k, int64_t m) {
    const int64_t T = 64;
    for (int64_t i0 = 0; i0 < n; i0 += T)
        for (int64_t p0 = 0; p0 < k; p0 += T)
            for (int64_t i = i0; i < std::min(i0 + T, n); ++i)
                for (int64_t p = p0; p < std::min(p0 + T, k); ++p) {
                    const float av = a[i * k + p];
                    const float* brow = b + p * m;
                    float* crow = c + i * m;
                    for (int64_t j = 0; j < m; ++j) crow[j] += av * brow[j];
                }
}

torch::Tensor own_gemm(torch::Tensor a, torch::Tensor b) {
    a = a.contiguous();
    b = b.contiguous();
    auto c = torch::zeros({a.size(0), b.size(1)}, a.options());
    block_gemm(a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), a.size(0), a.size(1), b.size(1));
    return c;
}
"""

_ext = load_inline(name="kb_honest_block_gemm", cpp_sources=_SRC, functions=["own_gemm"],
                   extra_cflags=["-O3", "-march=native"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return _ext.own_gemm(A, B)
