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
