"""A realistic grading batch (#23): about 100 submissions over 31 v3 problems, written the way agents write them.

Most are `load_inline` CUDA with several kernels and pybind bindings (tiled GEMMs with fused epilogues, block
reductions, pooling), some naive and slow, some wrong, a few that do not compile, and wrappers that call the
reference's ops around a copy kernel; the rest are Triton. Every source is distinct, so every CUDA one is its own
build, as in a real batch of agent rollouts.

    python benchmarks/realistic_batch.py build OUT          # OUT/manifest.jsonl + OUT/subs/*.py
    python benchmarks/realistic_batch.py summary RUN [RUN]  # per run: wall, stages, verdicts; verdict identity
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

HEAD = """import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.cpp_extension import load_inline
"""

# --- CUDA kernel families: each is (cuda source, cpp declarations, functions); KB_BLOCK varies per variant --------

GEMM = r"""
#define TM 64
#define TN 64
#define TK 16
// C[b] = A[b] (M x K, row-major) times B[b] (K x N row-major, or N x K when trans_b), 4x4 outputs per thread.
__global__ void sgemm_tiled(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                            int M, int N, int K, long sa, long sb, long sc, int trans_b) {
    __shared__ float As[TK][TM + 1];
    __shared__ float Bs[TK][TN + 1];
    A += blockIdx.z * sa; B += blockIdx.z * sb; C += blockIdx.z * sc;
    int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    int row0 = blockIdx.y * TM, col0 = blockIdx.x * TN;
    float acc[4][4] = {{0.f}};
    for (int k0 = 0; k0 < K; k0 += TK) {
        for (int i = threadIdx.x; i < TM * TK; i += 256) {
            int m = i / TK, k = i % TK, gm = row0 + m, gk = k0 + k;
            As[k][m] = (gm < M && gk < K) ? A[(long)gm * K + gk] : 0.f;
        }
        for (int i = threadIdx.x; i < TK * TN; i += 256) {
            int k = i / TN, n = i % TN, gk = k0 + k, gn = col0 + n;
            float v = 0.f;
            if (gk < K && gn < N) v = trans_b ? B[(long)gn * K + gk] : B[(long)gk * N + gn];
            Bs[k][n] = v;
        }
        __syncthreads();
        #pragma unroll
        for (int k = 0; k < TK; ++k) {
            float a[4], b[4];
            #pragma unroll
            for (int i = 0; i < 4; ++i) { a[i] = As[k][ty + 16 * i]; b[i] = Bs[k][tx + 16 * i]; }
            #pragma unroll
            for (int i = 0; i < 4; ++i)
                #pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
            int gm = row0 + ty + 16 * i, gn = col0 + tx + 16 * j;
            if (gm < M && gn < N) C[(long)gm * N + gn] = acc[i][j];
        }
}

// one thread per output, no tiling: what a first attempt looks like
__global__ void sgemm_naive(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                            int M, int N, int K, long sa, long sb, long sc, int trans_b) {
    A += blockIdx.z * sa; B += blockIdx.z * sb; C += blockIdx.z * sc;
    int n = blockIdx.x * blockDim.x + threadIdx.x, m = blockIdx.y;
    if (n >= N) return;
    float s = 0.f;
    for (int k = 0; k < K; ++k) s += A[(long)m * K + k] * (trans_b ? B[(long)n * K + k] : B[(long)k * N + n]);
    C[(long)m * N + n] = s;
}

__device__ __forceinline__ float gelu_erf(float x) { return 0.5f * x * (1.f + erff(x * 0.70710678118654752f)); }

// bias then the problem's elementwise tail: 0 none, 1 v*(1+p), 2 swish(v)*p, 3 gelu(v/p), 4 gelu(v)
__global__ void bias_epilogue(float* __restrict__ C, const float* __restrict__ bias, long total, int N, int op, float p) {
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += (long)gridDim.x * blockDim.x) {
        float v = C[i] + (bias ? bias[i % N] : 0.f);
        if (op == 1) v = v * (1.f + p);
        else if (op == 2) v = v / (1.f + __expf(-v)) * p;
        else if (op == 3) v = gelu_erf(v / p);
        else if (op == 4) v = gelu_erf(v);
        C[i] = v;
    }
}

__global__ void row_softmax(float* __restrict__ x, int N) {
    __shared__ float red[KB_BLOCK];
    float* row = x + (long)blockIdx.x * N;
    float m = -INFINITY;
    for (int i = threadIdx.x; i < N; i += blockDim.x) m = fmaxf(m, row[i]);
    red[threadIdx.x] = m; __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) { if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]); __syncthreads(); }
    m = red[0]; __syncthreads();
    float sum = 0.f;
    for (int i = threadIdx.x; i < N; i += blockDim.x) sum += __expf(row[i] - m);
    red[threadIdx.x] = sum; __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) { if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s]; __syncthreads(); }
    float inv = 1.f / red[0];
    for (int i = threadIdx.x; i < N; i += blockDim.x) row[i] = __expf(row[i] - m) * inv;
}

torch::Tensor gemm(torch::Tensor A, torch::Tensor B, bool trans_b, bool naive) {
    TORCH_CHECK(A.is_cuda() && A.dtype() == torch::kFloat32, "A must be a CUDA float32 tensor");
    A = A.contiguous(); B = B.contiguous();
    bool batched = A.dim() == 3;
    long batch = batched ? A.size(0) : 1;
    int M = A.size(-2), K = A.size(-1), N = trans_b ? B.size(-2) : B.size(-1);
    auto C = batched ? torch::empty({batch, M, N}, A.options()) : torch::empty({M, N}, A.options());
    long sa = (long)M * K, sb = batched ? (long)K * N : 0, sc = (long)M * N;
    if (naive) {
        sgemm_naive<<<dim3((N + KB_BLOCK - 1) / KB_BLOCK, M, batch), KB_BLOCK>>>(A.data_ptr<float>(), B.data_ptr<float>(),
            C.data_ptr<float>(), M, N, K, sa, sb, sc, trans_b);
    } else {
        sgemm_tiled<<<dim3((N + TN - 1) / TN, (M + TM - 1) / TM, batch), 256>>>(A.data_ptr<float>(), B.data_ptr<float>(),
            C.data_ptr<float>(), M, N, K, sa, sb, sc, trans_b);
    }
    return C;
}

torch::Tensor linear_epilogue(torch::Tensor x, torch::Tensor w, torch::Tensor b, int64_t op, double p, bool softmax) {
    auto y = gemm(x, w, true, false);
    long total = y.numel();
    int N = y.size(-1);
    bias_epilogue<<<1024, KB_BLOCK>>>(y.data_ptr<float>(), b.data_ptr<float>(), total, N, (int)op, (float)p);
    if (softmax) row_softmax<<<total / N, KB_BLOCK>>>(y.data_ptr<float>(), N);
    return y;
}
"""
GEMM_CPP = """torch::Tensor gemm(torch::Tensor A, torch::Tensor B, bool trans_b, bool naive);
torch::Tensor linear_epilogue(torch::Tensor x, torch::Tensor w, torch::Tensor b, int64_t op, double p, bool softmax);"""

ELEMENTWISE = r"""
__device__ __forceinline__ float gelu_erf(float x) { return 0.5f * x * (1.f + erff(x * GELU_K)); }

__global__ void gelu_scalar(const float* __restrict__ x, float* __restrict__ y, long n) {
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) y[i] = gelu_erf(x[i]);
}

__global__ void gelu_vec4(const float4* __restrict__ x, float4* __restrict__ y, long n4) {
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += (long)gridDim.x * blockDim.x) {
        float4 v = x[i];
        v.x = gelu_erf(v.x); v.y = gelu_erf(v.y); v.z = gelu_erf(v.z); v.w = gelu_erf(v.w);
        y[i] = v;
    }
}

__global__ void row_softmax(const float* __restrict__ x, float* __restrict__ y, int N) {
    __shared__ float red[KB_BLOCK];
    const float* row = x + (long)blockIdx.x * N;
    float* out = y + (long)blockIdx.x * N;
    float m = -INFINITY;
    for (int i = threadIdx.x; i < N; i += blockDim.x) m = fmaxf(m, row[i]);
    red[threadIdx.x] = m; __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) { if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]); __syncthreads(); }
    m = red[0]; __syncthreads();
    float sum = 0.f;
    for (int i = threadIdx.x; i < N; i += blockDim.x) sum += __expf(row[i] - m);
    red[threadIdx.x] = sum; __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) { if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s]; __syncthreads(); }
    float inv = SOFTMAX_NORM / red[0];
    for (int i = threadIdx.x; i < N; i += blockDim.x) out[i] = __expf(row[i] - m) * inv;
}

torch::Tensor gelu(torch::Tensor x) {
    x = x.contiguous();
    auto y = torch::empty_like(x);
    long n = x.numel();
    if (n % 4 == 0) gelu_vec4<<<2048, KB_BLOCK>>>((const float4*)x.data_ptr<float>(), (float4*)y.data_ptr<float>(), n / 4);
    else gelu_scalar<<<2048, KB_BLOCK>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}

torch::Tensor softmax_rows(torch::Tensor x) {
    x = x.contiguous();
    auto y = torch::empty_like(x);
    int N = x.size(-1);
    row_softmax<<<x.numel() / N, KB_BLOCK>>>(x.data_ptr<float>(), y.data_ptr<float>(), N);
    return y;
}
"""
ELEMENTWISE_CPP = "torch::Tensor gelu(torch::Tensor x);\ntorch::Tensor softmax_rows(torch::Tensor x);"

NORMS = r"""
// RMSNorm over dim 1 of (B, C, H, W): one thread per (b, h, w) position, then an elementwise pass.
__global__ void rms_stats(const float* __restrict__ x, float* __restrict__ inv, int C, long hw, long total, float eps) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= total) return;
    long b = i / hw, p = i % hw;
    const float* xs = x + b * C * hw + p;
    float s = 0.f;
    for (int c = 0; c < C; ++c) { float v = xs[c * hw]; s += v * v; }
    inv[i] = rsqrtf(s / C + eps);
}

__global__ void rms_apply(const float* __restrict__ x, const float* __restrict__ inv, float* __restrict__ y, int C, long hw, long n) {
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        long b = i / (C * hw), p = i % hw;
        y[i] = x[i] * inv[b * hw + p];
    }
}

// LayerNorm over everything but dim 0: per-sample partial sums in double, then normalise with the affine weights.
__global__ void ln_partial(const float* __restrict__ x, double* __restrict__ part, long n, int chunks) {
    int sample = blockIdx.y, chunk = blockIdx.x;
    long per = (n + chunks - 1) / chunks, lo = (long)chunk * per, hi = min(n, lo + per);
    const float* xs = x + (long)sample * n;
    double s = 0.0, q = 0.0;
    for (long i = lo + threadIdx.x; i < hi; i += blockDim.x) { double v = xs[i]; s += v; q += v * v; }
    __shared__ double ss[KB_BLOCK], qq[KB_BLOCK];
    ss[threadIdx.x] = s; qq[threadIdx.x] = q; __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st >>= 1) {
        if (threadIdx.x < st) { ss[threadIdx.x] += ss[threadIdx.x + st]; qq[threadIdx.x] += qq[threadIdx.x + st]; }
        __syncthreads();
    }
    if (threadIdx.x == 0) { part[(sample * chunks + chunk) * 2] = ss[0]; part[(sample * chunks + chunk) * 2 + 1] = qq[0]; }
}

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
        ys[i] = (xs[i] - mean_s) * rstd_s * w[i] + LN_BIAS(b[i]);
}

torch::Tensor rms_norm(torch::Tensor x, double eps) {
    x = x.contiguous();
    int C = x.size(1);
    long hw = x.numel() / (x.size(0) * C), total = x.size(0) * hw;
    auto inv = torch::empty({total}, x.options());
    auto y = torch::empty_like(x);
    rms_stats<<<(total + KB_BLOCK - 1) / KB_BLOCK, KB_BLOCK>>>(x.data_ptr<float>(), inv.data_ptr<float>(), C, hw, total, (float)eps);
    rms_apply<<<4096, KB_BLOCK>>>(x.data_ptr<float>(), inv.data_ptr<float>(), y.data_ptr<float>(), C, hw, x.numel());
    return y;
}

torch::Tensor layer_norm(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps) {
    x = x.contiguous();
    long batch = x.size(0), n = x.numel() / batch;
    int chunks = 256;
    auto part = torch::empty({batch * chunks * 2}, x.options().dtype(torch::kFloat64));
    auto y = torch::empty_like(x);
    ln_partial<<<dim3(chunks, batch), KB_BLOCK>>>(x.data_ptr<float>(), part.data_ptr<double>(), n, chunks);
    ln_apply<<<dim3(1024, batch), KB_BLOCK>>>(x.data_ptr<float>(), part.data_ptr<double>(), w.contiguous().data_ptr<float>(),
                                             b.contiguous().data_ptr<float>(), y.data_ptr<float>(), n, chunks, eps);
    return y;
}
"""
NORMS_CPP = "torch::Tensor rms_norm(torch::Tensor x, double eps);\ntorch::Tensor layer_norm(torch::Tensor x, torch::Tensor w, torch::Tensor b, double eps);"

REDUCTIONS = r"""
__global__ void maxpool2d(const float* __restrict__ x, float* __restrict__ y, int H, int W, int OH, int OW,
                          int k, int s, int p, int d, long total) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= total) return;
    int ow = i % OW, oh = (i / OW) % OH;
    long plane = i / ((long)OH * OW);
    const float* xp = x + plane * H * W;
    float m = -INFINITY;
    for (int kh = 0; kh < k; ++kh) {
        int ih = oh * s - p + kh * d;
        if (ih < 0 || ih >= H) continue;
        for (int kw = 0; kw < k; ++kw) {
            int iw = ow * s - p + kw * d;
            if (iw >= 0 && iw < W) m = fmaxf(m, xp[(long)ih * W + iw]);
        }
    }
    y[i] = m;
}

// sum over the middle dim of (B, R, C): one thread per (b, c), coalesced over c
__global__ void sum_middle(const float* __restrict__ x, float* __restrict__ y, int R, int C, long total) {
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= total) return;
    long b = i / C, c = i % C;
    const float* xs = x + b * R * C + c;
    float s = 0.f;
    for (int r = 0; r < R; ++r) s += xs[(long)r * C];
    y[i] = s;
}

__global__ void matvec_rows(const float* __restrict__ A, const float* __restrict__ v, float* __restrict__ y, long K) {
    __shared__ float red[KB_BLOCK];
    const float* row = A + (long)blockIdx.x * K;
    float s = 0.f;
    for (long k = threadIdx.x; k < K; k += blockDim.x) s += row[k] * v[k];
    red[threadIdx.x] = s; __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st >>= 1) { if (threadIdx.x < st) red[threadIdx.x] += red[threadIdx.x + st]; __syncthreads(); }
    if (threadIdx.x == 0) y[blockIdx.x] = red[0];
}

// cross entropy: per-row (logsumexp - logit of the target), then the mean in one block
__global__ void ce_rows(const float* __restrict__ x, const long* __restrict__ t, float* __restrict__ loss, int N) {
    __shared__ float red[KB_BLOCK];
    const float* row = x + (long)blockIdx.x * N;
    float m = -INFINITY;
    for (int i = threadIdx.x; i < N; i += blockDim.x) m = fmaxf(m, row[i]);
    red[threadIdx.x] = m; __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st >>= 1) { if (threadIdx.x < st) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + st]); __syncthreads(); }
    m = red[0]; __syncthreads();
    float s = 0.f;
    for (int i = threadIdx.x; i < N; i += blockDim.x) s += expf(row[i] - m);
    red[threadIdx.x] = s; __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st >>= 1) { if (threadIdx.x < st) red[threadIdx.x] += red[threadIdx.x + st]; __syncthreads(); }
    if (threadIdx.x == 0) loss[blockIdx.x] = logf(red[0]) + m - row[t[blockIdx.x]];
}

__global__ void mean_all(const float* __restrict__ v, float* __restrict__ out, int n) {
    __shared__ float red[KB_BLOCK];
    float s = 0.f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) s += v[i];
    red[threadIdx.x] = s; __syncthreads();
    for (int st = blockDim.x / 2; st > 0; st >>= 1) { if (threadIdx.x < st) red[threadIdx.x] += red[threadIdx.x + st]; __syncthreads(); }
    if (threadIdx.x == 0) out[0] = red[0] / n;
}

torch::Tensor max_pool(torch::Tensor x, int64_t k, int64_t s, int64_t p, int64_t d) {
    x = x.contiguous();
    int H = x.size(2), W = x.size(3);
    int OH = (H + 2 * p - d * (k - 1) - 1) / s + 1, OW = (W + 2 * p - d * (k - 1) - 1) / s + 1;
    auto y = torch::empty({x.size(0), x.size(1), OH, OW}, x.options());
    long total = y.numel();
    maxpool2d<<<(total + KB_BLOCK - 1) / KB_BLOCK, KB_BLOCK>>>(x.data_ptr<float>(), y.data_ptr<float>(), H, W, OH, OW, k, s, p, d, total);
    return y;
}

torch::Tensor sum_dim1(torch::Tensor x) {
    x = x.contiguous();
    int R = x.size(1), C = x.size(2);
    auto y = torch::empty({x.size(0), 1, C}, x.options());
    long total = x.size(0) * (long)C;
    sum_middle<<<(total + KB_BLOCK - 1) / KB_BLOCK, KB_BLOCK>>>(x.data_ptr<float>(), y.data_ptr<float>(), R, C, total);
    return y;
}

torch::Tensor matvec(torch::Tensor A, torch::Tensor v) {
    A = A.contiguous(); v = v.contiguous();
    auto y = torch::empty({A.size(0), 1}, A.options());
    matvec_rows<<<A.size(0), KB_BLOCK>>>(A.data_ptr<float>(), v.data_ptr<float>(), y.data_ptr<float>(), A.size(1));
    return y;
}

torch::Tensor cross_entropy(torch::Tensor x, torch::Tensor t) {
    x = x.contiguous(); t = t.contiguous();
    int B = x.size(0), N = x.size(1);
    auto loss = torch::empty({B}, x.options());
    auto out = torch::empty({}, x.options());
    ce_rows<<<B, KB_BLOCK>>>(x.data_ptr<float>(), t.data_ptr<long>(), loss.data_ptr<float>(), N);
    mean_all<<<1, KB_BLOCK>>>(loss.data_ptr<float>(), out.data_ptr<float>(), B);
    return out;
}
"""
REDUCTIONS_CPP = """torch::Tensor max_pool(torch::Tensor x, int64_t k, int64_t s, int64_t p, int64_t d);
torch::Tensor sum_dim1(torch::Tensor x);
torch::Tensor matvec(torch::Tensor A, torch::Tensor v);
torch::Tensor cross_entropy(torch::Tensor x, torch::Tensor t);"""

COPY = r"""
// the "custom kernel" of a wrapper: the reference's ops do the work, this scales by one
__global__ void scale_copy(const float* __restrict__ x, float* __restrict__ y, float a, long n) {
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) y[i] = x[i] * a;
}

torch::Tensor scaled(torch::Tensor x, double a) {
    x = x.contiguous();
    auto y = torch::empty_like(x);
    scale_copy<<<1024, KB_BLOCK>>>(x.data_ptr<float>(), y.data_ptr<float>(), (float)a, x.numel());
    return y;
}
"""
COPY_CPP = "torch::Tensor scaled(torch::Tensor x, double a);"

FAMILIES = {
    "gemm": (GEMM, GEMM_CPP, ["gemm", "linear_epilogue"]),
    "elementwise": (ELEMENTWISE, ELEMENTWISE_CPP, ["gelu", "softmax_rows"]),
    "norms": (NORMS, NORMS_CPP, ["rms_norm", "layer_norm"]),
    "reductions": (REDUCTIONS, REDUCTIONS_CPP, ["max_pool", "sum_dim1", "matvec", "cross_entropy"]),
    "copy": (COPY, COPY_CPP, ["scaled"]),
}

# the model each problem's CUDA submission defines: (family, class body)
CUDA_MODELS = {
    "v3/level1/26_GELU_": ("elementwise", "def __init__(self):\n        super().__init__()\n\n    def forward(self, x):\n        return _ext.gelu(x)"),
    "v3/level1/23_Softmax": ("elementwise", "def __init__(self):\n        super().__init__()\n\n    def forward(self, x):\n        return _ext.softmax_rows(x)"),
    "v3/level1/36_RMSNorm_": ("norms", "def __init__(self, num_features, eps=1e-5):\n        super().__init__()\n        self.eps = eps\n\n    def forward(self, x):\n        return _ext.rms_norm(x, self.eps)"),
    "v3/level1/40_LayerNorm": ("norms", "def __init__(self, normalized_shape):\n        super().__init__()\n        self.ln = nn.LayerNorm(normalized_shape)\n\n    def forward(self, x):\n        return _ext.layer_norm(x, self.ln.weight, self.ln.bias, self.ln.eps)"),
    "v3/level1/42_Max_Pooling_2D": ("reductions", "def __init__(self, kernel_size, stride, padding, dilation):\n        super().__init__()\n        self.p = (kernel_size, stride, padding, dilation)\n\n    def forward(self, x):\n        return _ext.max_pool(x, *self.p)"),
    "v3/level1/47_Sum_reduction_over_a_dimension": ("reductions", "def __init__(self, dim):\n        super().__init__()\n\n    def forward(self, x):\n        return _ext.sum_dim1(x)"),
    "v3/level1/4_Matrix_vector_multiplication_": ("reductions", "def __init__(self):\n        super().__init__()\n\n    def forward(self, A, B):\n        return _ext.matvec(A, B)"),
    "v3/level1/95_CrossEntropyLoss": ("reductions", "def __init__(self):\n        super().__init__()\n\n    def forward(self, predictions, targets):\n        return _ext.cross_entropy(predictions, targets)"),
    **{f"v3/level1/{p}": ("gemm", "def __init__(self):\n        super().__init__()\n\n    def forward(self, A, B):\n        return _ext.gemm(A, B, False, NAIVE)")
       for p in ("1_Square_matrix_multiplication_", "2_Standard_matrix_multiplication_", "3_Batched_matrix_multiplication",
                 "8_Matmul_with_irregular_shapes_", "9_Tall_skinny_matrix_multiplication_")},
    "v3/level2/40_Matmul_Scaling_ResidualAdd": ("gemm", "def __init__(self, in_features, out_features, scaling_factor):\n        super().__init__()\n        self.matmul = nn.Linear(in_features, out_features)\n        self.s = scaling_factor\n\n    def forward(self, x):\n        return _ext.linear_epilogue(x, self.matmul.weight, self.matmul.bias, 1, self.s, False)"),
    "v3/level2/59_Matmul_Swish_Scaling": ("gemm", "def __init__(self, in_features, out_features, scaling_factor):\n        super().__init__()\n        self.matmul = nn.Linear(in_features, out_features)\n        self.s = scaling_factor\n\n    def forward(self, x):\n        return _ext.linear_epilogue(x, self.matmul.weight, self.matmul.bias, 2, self.s, False)"),
    "v3/level2/86_Matmul_Divide_GELU": ("gemm", "def __init__(self, input_size, output_size, divisor):\n        super().__init__()\n        self.linear = nn.Linear(input_size, output_size)\n        self.d = divisor\n\n    def forward(self, x):\n        return _ext.linear_epilogue(x, self.linear.weight, self.linear.bias, 3, self.d, False)"),
    "v3/level2/99_Matmul_GELU_Softmax": ("gemm", "def __init__(self, in_features, out_features):\n        super().__init__()\n        self.linear = nn.Linear(in_features, out_features)\n\n    def forward(self, x):\n        return _ext.linear_epilogue(x, self.linear.weight, self.linear.bias, 4, 1.0, True)"),
}

# problems whose submissions wrap the reference's own forward around a copy kernel (CUDA) or a Triton copy
WRAPPED = ["v3/level2/17_Conv2d_InstanceNorm_Divide", "v3/level2/46_Conv2d_Subtract_Tanh_Subtract_AvgPool",
           "v3/level2/52_Conv2d_Activation_BatchNorm", "v3/level2/6_Conv3d_Softmax_MaxPool_MaxPool",
           "v3/level2/73_Conv2d_BatchNorm_Scaling", "v3/level2/82_Conv2d_Tanh_Scaling_BiasAdd_Max",
           "v3/level2/85_Conv2d_GroupNorm_Scale_MaxPool_Clamp", "v3/level2/37_Matmul_Swish_Sum_GroupNorm",
           "v3/level2/55_Matmul_MaxPool_Sum_Scale", "v3/level2/66_Matmul_Dropout_Mean_Softmax",
           "v3/level2/98_Matmul_AvgPool_GELU_Scale_Max", "v3/level3/31_VisionAttention",
           "v3/level3/43_MinGPTCausalAttention", "v3/level3/44_MiniGPTBlock"]

SUBSTITUTIONS = {"GELU_K": "0.70710678118654752f", "SOFTMAX_NORM": "1.f", "LN_BIAS(v)": "(v)"}
WRONG = {  # what makes a variant wrong: a constant an agent got wrong
    "v3/level1/26_GELU_": ("GELU_K", "0.7978845608f"),
    "v3/level1/23_Softmax": ("SOFTMAX_NORM", "0.5f"),
    "v3/level1/40_LayerNorm": ("LN_BIAS(v)", "0.f"),
}


def cuda_source(pid: str, family: str, body: str, block: int, variant: str, *, naive: bool = False,
                wrong: bool = False, broken: bool = False) -> str:
    src, cpp, functions = FAMILIES[family]
    subs = dict(SUBSTITUTIONS)
    if wrong:
        k, v = WRONG[pid]
        subs[k] = v
    defines = f"#define KB_BLOCK {block}\n" + "".join(f"#define {k} {v}\n" for k, v in subs.items())
    if broken:  # the typical compile error: a helper used before it is declared
        src = src.replace("__global__", "__global__ void helper_typo(float* x) { x[0] = undeclared_scale * 2.f; }\n__global__", 1)
    name = f"kb_{family}_{variant}"
    return (HEAD + f'\n# {pid}: {family} kernels, block {block}{" (naive)" if naive else ""}\n'
            f'CUDA_SRC = r"""\n{defines}{src}"""\nCPP_SRC = """{cpp}"""\n'
            f'_ext = load_inline("{name}", cpp_sources=CPP_SRC, cuda_sources=CUDA_SRC, functions={functions!r},\n'
            f'                   extra_cuda_cflags=["-O3"], verbose=False)\nNAIVE = {naive}\n\n\n'
            f"class ModelNew(nn.Module):\n    {body}\n")


def wrapper_source(pid: str, problem_code: str, block: int, variant: str) -> str:
    src, cpp, functions = FAMILIES["copy"]
    return (problem_code + f'\n\nfrom torch.utils.cpp_extension import load_inline\n\nCUDA_SRC = r"""\n#define KB_BLOCK {block}\n{src}"""\n'
            f'_ext = load_inline("kb_copy_{variant}", cpp_sources="""{cpp}""", cuda_sources=CUDA_SRC, functions={functions!r})\n\n\n'
            "class ModelNew(Model):\n    def forward(self, *args):\n        return _ext.scaled(super().forward(*args), 1.0)\n")


TRITON_HEAD = "import torch\nimport torch.nn as nn\nimport triton\nimport triton.language as tl\n"

TRITON_KERNELS = {
    "gelu": ("""
@triton.jit
def gelu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476)), mask=mask)
""", """def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        gelu_kernel[(triton.cdiv(x.numel(), BLOCK),)](x, y, x.numel(), BLOCK=BLOCK, num_warps=WARPS)
        return y"""),
    "softmax": ("""
@triton.jit
def softmax_kernel(x_ptr, y_ptr, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    for start in range(0, N, BLOCK):
        x = tl.load(x_ptr + row * N + start + offs, mask=start + offs < N, other=float("-inf"))
        m = tl.maximum(m, x)
    mx = tl.max(m, 0)
    s = tl.zeros([BLOCK], tl.float32)
    for start in range(0, N, BLOCK):
        x = tl.load(x_ptr + row * N + start + offs, mask=start + offs < N, other=float("-inf"))
        s += tl.exp(x - mx)
    total = tl.sum(s, 0)
    for start in range(0, N, BLOCK):
        mask = start + offs < N
        x = tl.load(x_ptr + row * N + start + offs, mask=mask, other=float("-inf"))
        tl.store(y_ptr + row * N + start + offs, tl.exp(x - mx) / total, mask=mask)
""", """def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        softmax_kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK=BLOCK, num_warps=WARPS)
        return y"""),
    "rmsnorm": ("""
@triton.jit
def rms_kernel(x_ptr, y_ptr, C, HW, eps, BLOCK: tl.constexpr):
    b = tl.program_id(1)
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < HW
    base = x_ptr + b * C * HW + offs
    s = tl.zeros([BLOCK], tl.float32)
    for c in range(0, C):
        v = tl.load(base + c * HW, mask=mask, other=0.0)
        s += v * v
    inv = 1.0 / tl.sqrt(s / C + eps)
    for c in range(0, C):
        v = tl.load(base + c * HW, mask=mask, other=0.0)
        tl.store(y_ptr + b * C * HW + c * HW + offs, v * inv, mask=mask)
""", """def __init__(self, num_features, eps=1e-5):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        B, C = x.shape[:2]
        hw = x.numel() // (B * C)
        rms_kernel[(triton.cdiv(hw, BLOCK), B)](x, y, C, hw, self.eps, BLOCK=BLOCK, num_warps=WARPS)
        return y"""),
    "matmul": ("""
@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK: tl.constexpr, BK: tl.constexpr):
    pm, pn = tl.program_id(0), tl.program_id(1)
    rm = pm * BLOCK + tl.arange(0, BLOCK)
    rn = pn * BLOCK + tl.arange(0, BLOCK)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BLOCK, BLOCK], tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * K + (k + rk)[None, :], mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * N + rn[None, :], mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))
""", """def __init__(self):
        super().__init__()

    def forward(self, A, B):
        A, B = A.contiguous(), B.contiguous()
        M, K = A.shape
        N = B.shape[1]
        C = torch.empty(M, N, device=A.device, dtype=A.dtype)
        mm_kernel[(triton.cdiv(M, BLOCK), triton.cdiv(N, BLOCK))](A, B, C, M, N, K, BLOCK=BLOCK, BK=16, num_warps=WARPS)
        return C"""),
}
TRITON_PROBLEMS = {"gelu": ["v3/level1/26_GELU_"], "softmax": ["v3/level1/23_Softmax"], "rmsnorm": ["v3/level1/36_RMSNorm_"],
                   "matmul": ["v3/level1/1_Square_matrix_multiplication_", "v3/level1/2_Standard_matrix_multiplication_",
                              "v3/level1/8_Matmul_with_irregular_shapes_"]}

TRITON_COPY = """
@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


class ModelNew(Model):
    def forward(self, *args):
        out = super().forward(*args).contiguous()
        y = torch.empty_like(out)
        copy_kernel[(triton.cdiv(out.numel(), BLOCK),)](out, y, out.numel(), BLOCK=BLOCK, num_warps=WARPS)
        return y
"""


def triton_source(kind: str, pid: str, block: int, warps: int) -> str:
    kernel, body = TRITON_KERNELS[kind]
    return (TRITON_HEAD + f"\n# {pid}: Triton {kind}, block {block}, {warps} warps\nBLOCK, WARPS = {block}, {warps}\n"
            f"{kernel}\n\nclass ModelNew(nn.Module):\n    {body}\n")


def submissions() -> list[tuple[str, str, str]]:
    """(problem id, kind, source) for the whole batch, in a fixed order (problems interleaved, as a queue of
    rollouts would be)."""
    out = []
    problems = ROOT / "problems"
    for i, (pid, (family, body)) in enumerate(CUDA_MODELS.items()):
        for j, block in enumerate((128, 256, 512)):
            out.append((pid, "cuda", cuda_source(pid, family, body, block, f"{i}_{j}")))
        if family == "gemm" and pid.startswith("v3/level1/") and not pid.startswith("v3/level1/8_"):
            out.append((pid, "cuda_naive", cuda_source(pid, family, body, 256, f"{i}_naive", naive=True)))
        if pid in WRONG:
            out.append((pid, "cuda_wrong", cuda_source(pid, family, body, 256, f"{i}_wrong", wrong=True)))
        if i % 4 == 1:
            out.append((pid, "cuda_broken", cuda_source(pid, family, body, 256, f"{i}_broken", broken=True)))
    for i, pid in enumerate(WRAPPED):
        code = (problems / (pid + ".py")).read_text(encoding="utf-8")
        out.append((pid, "cuda_wrapper", wrapper_source(pid, code, 256, f"w{i}")))
        out.append((pid, "triton_wrapper", code.replace("import torch\n", "import torch\nimport triton\nimport triton.language as tl\n", 1)
                    + f"\nBLOCK, WARPS = {1024 * (1 + i % 2)}, {4 * (1 + i % 2)}\n" + TRITON_COPY))
    for kind, pids in TRITON_PROBLEMS.items():
        for pid in pids:
            for block, warps in ((64, 4), (128, 8)) if kind == "matmul" else ((1024, 4), (2048, 8), (4096, 8)):
                out.append((pid, f"triton_{kind}", triton_source(kind, pid, block, warps)))
    order = sorted(range(len(out)), key=lambda k: (k * 7919) % len(out))  # a fixed shuffle
    return [out[k] for k in order]


def build(out: Path) -> None:
    subs = out / "subs"
    subs.mkdir(parents=True, exist_ok=True)
    rows = []
    for n, (pid, kind, src) in enumerate(submissions()):
        path = subs / f"{n:03d}_{pid.split('/')[-1]}_{kind}.py"
        path.write_text(src, encoding="utf-8")
        rows.append({"problem": pid, "submission": str(path.relative_to(out)), "model": kind})
    (out / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    kinds = Counter(r["model"] for r in rows)
    print(f"{len(rows)} submissions over {len({r['problem'] for r in rows})} problems: "
          + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))


def _median(xs):
    return round(statistics.median(xs), 2) if xs else None


def summary(runs: list[Path]) -> None:
    verdicts, judged = [], []
    for run in runs:
        rows = [json.loads(line) for line in (run / "records.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
        meta = json.loads((run / "wall.json").read_text()) if (run / "wall.json").exists() else {}
        stages = [json.loads(r["harness_seconds"]) if isinstance(r.get("harness_seconds"), str) else r.get("harness_seconds") or {}
                  for r in rows]  # a JSON string in the record
        locked = [s["worker_wall"] for s in stages if s.get("worker_wall")]
        wall = meta.get("wall_s")
        print(f"{run.name}: {len(rows)} records" + (f" in {wall:.0f} s wall, {wall / max(1, len(rows)):.2f} s per submission"
                                                    if wall else "") + f" ({meta.get('what', '')})")
        print("  status: " + ", ".join(f"{k} {v}" for k, v in sorted(Counter(r["status"] for r in rows).items())))
        for kind in sorted({r["model"] for r in rows}):
            sel = [r for r in rows if r["model"] == kind]
            print(f"  {kind:15s} n={len(sel):3d} " + ", ".join(f"{k} {v}" for k, v in sorted(Counter(r['status'] for r in sel).items())))
        print(f"  GPU-locked (judge wall) median {_median(locked)} s, p90 "
              f"{round(sorted(locked)[int(0.9 * (len(locked) - 1))], 2) if locked else None} s, sum {round(sum(locked), 1)} s")
        for key in ("build", "build_wait", "setup", "reference_alone", "import_and_build_submission", "correctness", "timing",
                    "dynamic_checks", "sandbox_close"):
            xs = [s[key] for s in stages if s.get(key) is not None]
            if xs:
                print(f"  stage {key:28s} n={len(xs):3d} median {_median(xs)} s, sum {round(sum(xs), 1)} s")
        reused = sum("resident" in str((json.loads(r["flag_details"]) if r.get("flag_details") else {}).get("judge"))
                     for r in rows)
        print(f"  judge: the reference reused (resident judge) in {reused} of {len(rows)}")
        verdicts.append({(r["problem_id"], r["solution_sha256"]): (r["status"], tuple(sorted(r.get("flags") or [])))
                         for r in rows})
        judged.append({(r["problem_id"], r["solution_sha256"]): s.get("worker_wall") for r, s in zip(rows, stages)})
    for run, v, w in zip(runs[1:], verdicts[1:], judged[1:]):
        both = verdicts[0].keys() & v.keys()
        differ = sorted(k for k in both if verdicts[0][k] != v[k])
        print(f"verdicts {runs[0].name} vs {run.name}: {len(both)} graded in both, {len(differ)} differ")
        for k in differ:
            print(f"  {k[0]} {k[1][:10]}: {verdicts[0][k]} vs {v[k]}")
        pairs = [(judged[0][k], w[k]) for k in both if judged[0][k] and w[k]]
        if pairs:  # the arms may stop at different points: compare the submissions both graded
            a, b = zip(*pairs)
            print(f"  GPU-locked on those {len(pairs)}: median {_median(list(a))} vs {_median(list(b))} s, "
                  f"sum {round(sum(a), 1)} vs {round(sum(b), 1)} s")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("build").add_argument("out", type=Path)
    sub.add_parser("summary").add_argument("runs", type=Path, nargs="+")
    args = p.parse_args(argv)
    if args.cmd == "build":
        build(args.out)
    else:
        summary(args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
