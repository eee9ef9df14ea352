// The block-wide sum in double, for statistics that must not lose digits over a long row; every
// thread gets the result. Needs kWarps and kFullMask.
__device__ __forceinline__ double warp_sum(double v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(kFullMask, v, offset);
    return v;
}

// The block's sum; every thread gets it.
__device__ double block_sum(double v)
{
    __shared__ double partial[kWarps];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_sum(v);
    if (lane == 0)
        partial[warp] = v;
    __syncthreads();
    v = warp_sum(lane < kWarps ? partial[lane] : 0.0);
    __syncthreads(); // partial[] is free for the next call
    return v;
}
