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
