// @expect correct
// @problem softmax
// Softmax over dim 1, one block per row, three passes over the row with block reductions:
// the row maximum, then the sum of exp(x - max), then out = exp(x - max) / sum. Each thread
// strides over the row (so any row length works, 65536 at the seed size) and keeps an fp32
// partial; partials are combined by a warp-shuffle tree, so the sum's rounding error grows
// with log(N), not N. Subtracting the maximum keeps exp in range: strict tolerance.
// @precision fp32
// @launch softmax_rows grid(x.shape[0]) block(512) args(x, out, i32(x.shape[1]))

constexpr unsigned kFullMask = 0xffffffffu;
constexpr float kLowest = -3.402823466e+38f;  // -FLT_MAX, where a max starts (NVRTC has no float.h)

__device__ float warp_max(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v = fmaxf(v, __shfl_xor_sync(kFullMask, v, offset));
    return v;
}

__device__ float warp_sum(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(kFullMask, v, offset);
    return v;
}

// Block-wide reductions; every thread gets the result. blockDim.x must be a multiple of 32.
__device__ float block_max(float v)
{
    __shared__ float partial[32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_max(v);
    if (lane == 0)
        partial[warp] = v;
    __syncthreads();
    v = lane < blockDim.x / 32 ? partial[lane] : kLowest;
    v = warp_max(v);
    __syncthreads();  // partial[] may be reused by the next call
    return v;
}

__device__ float block_sum(float v)
{
    __shared__ float partial[32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_sum(v);
    if (lane == 0)
        partial[warp] = v;
    __syncthreads();
    v = lane < blockDim.x / 32 ? partial[lane] : 0.0f;
    v = warp_sum(v);
    __syncthreads();
    return v;
}

extern "C" __global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ out, int n)
{
    const float* row_in = x + (size_t)blockIdx.x * n;
    float* row_out = out + (size_t)blockIdx.x * n;

    float m = kLowest;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        m = fmaxf(m, row_in[i]);
    m = block_max(m);

    float s = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        s += expf(row_in[i] - m);
    s = block_sum(s);

    for (int i = threadIdx.x; i < n; i += blockDim.x)
        row_out[i] = expf(row_in[i] - m) / s;
}
