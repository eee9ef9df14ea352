// The block-wide sum in float; every thread gets the result. Needs kWarps and kFullMask.
__device__ __forceinline__ float warp_sum(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(kFullMask, v, offset);
    return v;
}

// The block's sum; every thread gets it.
__device__ float block_sum(float v)
{
    __shared__ float partial[kWarps];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_sum(v);
    if (lane == 0)
        partial[warp] = v;
    __syncthreads();
    v = warp_sum(lane < kWarps ? partial[lane] : 0.0f);
    __syncthreads();
    return v;
}
