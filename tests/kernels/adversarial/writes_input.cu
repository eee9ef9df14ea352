// @expect wrong
// @problem softmax
// A correct row softmax whose last pass also writes each result back into its input x
// (a stray in-place update). out is exactly right, but the engine compares the inputs with
// their untouched copies after the launch, and x has changed: a kernel may not write its
// inputs. Only the block that owns a row reads or writes it, and the write comes after that
// element's last read, so out itself is unaffected.
// @precision fp32
// @launch softmax_inplace grid(x.shape[0]) block(512) args(x, out, i32(x.shape[1]))

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

extern "C" __global__ void softmax_inplace(float* x, float* __restrict__ out, int n)
{
    float* row_in = x + (size_t)blockIdx.x * n;
    float* row_out = out + (size_t)blockIdx.x * n;

    float m = kLowest;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        m = fmaxf(m, row_in[i]);
    m = block_max(m);

    float s = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        s += expf(row_in[i] - m);
    s = block_sum(s);

    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        const float y = expf(row_in[i] - m) / s;
        row_out[i] = y;
        row_in[i] = y;  // the bug: scribbles over the input
    }
}
