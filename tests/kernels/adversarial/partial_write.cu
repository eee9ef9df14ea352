// @expect wrong
// @problem softmax
// A correct row softmax that stores only the first half of the output (flat index below
// numel / 2: the first B/2 rows, or half of the row when B is 1). The other elements keep the
// engine's NaN poison, so "every element written" fails on the first trial.
// @precision fp32
// @launch softmax_half grid(x.shape[0]) block(512) args(x, out, i32(x.shape[1]))

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

extern "C" __global__ void softmax_half(const float* __restrict__ x, float* __restrict__ out, int n)
{
    const size_t row_offset = (size_t)blockIdx.x * n;
    const size_t stored = (size_t)gridDim.x * n / 2;  // elements [0, stored) are written
    const float* row_in = x + row_offset;

    float m = kLowest;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        m = fmaxf(m, row_in[i]);
    m = block_max(m);

    float s = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        s += expf(row_in[i] - m);
    s = block_sum(s);

    for (int i = threadIdx.x; i < n; i += blockDim.x)
        if (row_offset + i < stored)
            out[row_offset + i] = expf(row_in[i] - m) / s;
}
