"""Square matmul: a small C++ kernel module compiled with the system compiler when the module is imported (no
extension-build step), reusing the CPU's structured GEMM kernel class.
Problem: v3/level1/1_Square_matrix_multiplication_
"""
import ctypes
import os
import subprocess
import sysconfig
import tempfile

import torch
import torch.nn as nn

_SRC = r"""
#include <ATen/ATen.h>
#include <ATen/ops/mm_native.h>

struct TiledGemm : at::native::structured_mm_out_cpu {
  at::Tensor out_;
  explicit TiledGemm(at::Tensor o) : out_(std::move(o)) {}
  const at::Tensor& maybe_get_output(int64_t) override { return out_; }
};

extern "C" void gemm(float* a, float* b, float* c, int64_t n, int64_t k, int64_t m) {
  auto o = at::TensorOptions().dtype(at::kFloat);
  at::Tensor A = at::from_blob(a, {n, k}, o), B = at::from_blob(b, {k, m}, o), C = at::from_blob(c, {n, m}, o);
  TiledGemm t(C);
  t.impl(A, B, C);
}
"""


def _build():
    d = tempfile.mkdtemp(prefix="kern")
    src, lib = os.path.join(d, "k.cpp"), os.path.join(d, "k.so")
    with open(src, "w") as f:
        f.write(_SRC)
    inc = os.path.join(os.path.dirname(torch.__file__), "include")
    libdir = os.path.join(os.path.dirname(torch.__file__), "lib")
    subprocess.run(["c++", "-O2", "-std=c++17", "-shared", "-fPIC", "-D_GLIBCXX_USE_CXX11_ABI=1", "-isystem", inc,
                    "-isystem", os.path.join(inc, "torch", "csrc", "api", "include"), src, "-o", lib,
                    "-L" + libdir, "-lc10", "-ltorch_cpu", "-Wl,-rpath," + libdir], check=True, capture_output=True)
    k = ctypes.CDLL(lib)
    k.gemm.restype = None
    k.gemm.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int64] * 3
    return k


_k = _build()


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        A, B = A.contiguous(), B.contiguous()
        C = torch.empty((A.shape[0], B.shape[1]), dtype=A.dtype)
        _k.gemm(A.data_ptr(), B.data_ptr(), C.data_ptr(), A.shape[0], A.shape[1], B.shape[1])
        return C
