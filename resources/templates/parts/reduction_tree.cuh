// Combining Reduction::Acc values (the template's Reduction struct) across a warp and a block. The
// order of combining is fixed by the thread layout, so a result does not change from run to run.
__device__ __forceinline__ Reduction::Acc warp_reduce(Reduction::Acc v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v = Reduction::combine(v, Reduction::shfl_xor(v, offset));
    return v;
}

// The block's value, in every thread: a warp tree, then the warps' values through shared memory.
template <int kThreads>
__device__ Reduction::Acc block_reduce(Reduction::Acc v)
{
    constexpr int kWarpsHere = kThreads / 32;
    __shared__ Reduction::Acc warpValue[kWarpsHere];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_reduce(v);
    if (lane == 0)
        warpValue[warp] = v;
    __syncthreads();
    v = warp_reduce(lane < kWarpsHere ? warpValue[lane] : Reduction::identity());
    __syncthreads(); // warpValue[] is free for the next call
    return v;
}
