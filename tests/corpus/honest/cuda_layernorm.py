"""LayerNorm over (C, H, W) as CUDA kernels built with load_inline: per-sample partial sums, then normalise with the loaded weights.
Problem: v3/level1/40_LayerNorm
Verdict: ok
Device: cuda
"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CUDA_SRC = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

// Stage 1: each block reduces one chunk of one sample into (sum, sum of squares) in double.
__global__ void ln_partial(const float* __restrict__ x, double* __restrict__ part, long n, int chunks) {
    int sample = blockIdx.y, chunk = blockIdx.x;
    long per = (n + chunks - 1) / chunks;
    long lo = (long)chunk * per, hi = min(n, lo + per);
    const float* xs = x + (long)sample * n;
    double s = 0.0, q = 0.0;
    for (long i = lo + threadIdx.x; i < hi; i += blockDim.x) { double v = xs[i]; s += v; q += v * v; }
    __shared__ double ss[256], qq[256];
    ss[threadIdx.x] = s; qq[threadIdx.x] = q;
    __syncthreads();
    for (int step = blockDim.x / 2; step > 0; step >>= 1) {
        if (threadIdx.x < step) { ss[threadIdx.x] += ss[threadIdx.x + step]; qq[threadIdx.x] += qq[threadIdx.x + step]; }
        __syncthreads();
    }
    if (threadIdx.x == 0) { part[(sample * chunks + chunk) * 2] = ss[0]; part[(sample * chunks + chunk) * 2 + 1] = qq[0]; }
}

// Stage 2: every element reads its sample's statistics (summed from the partials) and the affine weights.
__global__ void ln_apply(const float* __restrict__ x, const double* __restrict__ part, const float* __restrict__ w,
                         const float* __restrict__ b, float* __restrict__ y, long n, int chunks, double eps) {
    int sample = blockIdx.y;
    __shared__ float mean_s, rstd_s;
    if (threadIdx.x == 0) {
        double s = 0.0, q = 0.0;
        for (int c = 0; c < chunks; ++c) { s += part[(sample * chunks + c) * 2]; q += part[(sample * chunks + c) * 2 + 1]; }
        double mean = s / n, var = q / n - mean * mean;
        mean_s = (float)mean; rstd_s = (float)(1.0 / sqrt(var + eps));
    }
    __syncthreads();
    const float* xs = x + (long)sample * n;
    float* ys = y + (long)sample * n;
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        ys[i] = (xs[i] - mean_s) * rstd_s * w[i] + b[i];
}

torch::Tensor layer_norm(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps) {
    long batch = x.size(0), n = x.numel() / batch;
    int chunks = 256;
    auto part = torch::empty({batch * chunks * 2}, x.options().dtype(torch::kFloat64));
    auto y = torch::empty_like(x);
    ln_partial<<<dim3(chunks, batch), 256>>>(x.data_ptr<float>(), part.data_ptr<double>(), n, chunks);
    ln_apply<<<dim3(1024, batch), 256>>>(x.data_ptr<float>(), part.data_ptr<double>(), w.data_ptr<float>(),
                                         b.data_ptr<float>(), y.data_ptr<float>(), n, chunks, eps);
    return y;
}
"""
CPP_SRC = "torch::Tensor layer_norm(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps);"
_ext = load_inline("kb_corpus_layernorm", cpp_sources=CPP_SRC, cuda_sources=CUDA_SRC, functions=["layer_norm"],
                   extra_cuda_cflags=["-O3"], verbose=False)


class Model(nn.Module):
    def __init__(self, normalized_shape):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape)

    def forward(self, x):
        return _ext.layer_norm(x.contiguous(), self.ln.weight.contiguous(), self.ln.bias.contiguous(), self.ln.eps)
