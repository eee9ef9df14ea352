// Block-wide maximum and sum, reduced one after the other, for kernels that know the row's
// maximum before they take any exp (so no sum needs rescaling). Needs kBlock.
constexpr int kWarps = kBlock / 32;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr float kLowest = -3.402823466e+38f;   // -FLT_MAX, below every value

__device__ __forceinline__ float warp_max(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v = fmaxf(v, __shfl_xor_sync(kFullMask, v, offset));
    return v;
}

// The block's maximum; every thread gets it.
__device__ float block_max(float v)
{
    __shared__ float partial[kWarps];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_max(v);
    if (lane == 0)
        partial[warp] = v;
    __syncthreads();
    v = warp_max(lane < kWarps ? partial[lane] : kLowest);
    __syncthreads(); // partial[] is free again
    return v;
}

{{>block_sum}}
