// Folding values into Reduction::Acc (the template's Reduction struct) and combining the values of
// a warp and of a block. The order of combining is fixed by the thread layout, so a result does
// not change from run to run. Needs Input, Reduction and kVec (floats per load: 4 or 1).
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

// kVec values from element i (a multiple of kVec): one 16-byte load, or one value in .x.
__device__ __forceinline__ float4 load(const Input& in, long long i)
{
    if constexpr (kVec == 4)
        return in.at4(i);
    else
        return make_float4(in.at(i), 0.0f, 0.0f, 0.0f);
}

// Values v of positions first .. first + kVec - 1 of a row folded into acc.
__device__ __forceinline__ Reduction::Acc fold(Reduction::Acc acc, float4 v, long long first)
{
    acc = Reduction::combine(acc, Reduction::lift(v.x, first));
    if constexpr (kVec == 4) {
        acc = Reduction::combine(acc, Reduction::lift(v.y, first + 1));
        acc = Reduction::combine(acc, Reduction::lift(v.z, first + 2));
        acc = Reduction::combine(acc, Reduction::lift(v.w, first + 3));
    }
    return acc;
}

// A thread's share of `len` elements of a row at `base`: loads first, first + kStride, ... of kVec
// floats (len a multiple of kVec); element j is the row's position `position + j`.
template <int kStride>
__device__ __forceinline__ Reduction::Acc fold_row(const Input& in, long long base, long long len, int first,
                                                   long long position = 0)
{
    Reduction::Acc acc = Reduction::identity();
    for (long long j = (long long)kVec * first; j < len; j += (long long)kVec * kStride)
        acc = fold(acc, load(in, base + j), position + j);
    return acc;
}

// The reductions acc[c] of kVec adjacent columns from `base`, over rows r0 .. r1 - 1 (kStride apart).
template <long long kStride>
__device__ __forceinline__ void fold_columns(const Input& in, long long base, long long r0, long long r1,
                                             Reduction::Acc (&acc)[kVec])
{
#pragma unroll
    for (int c = 0; c < kVec; ++c)
        acc[c] = Reduction::identity();
#pragma unroll 4
    for (long long r = r0; r < r1; ++r) {
        const float4 v = load(in, base + r * kStride);
        acc[0] = Reduction::combine(acc[0], Reduction::lift(v.x, r));
        if constexpr (kVec == 4) {
            acc[1] = Reduction::combine(acc[1], Reduction::lift(v.y, r));
            acc[2] = Reduction::combine(acc[2], Reduction::lift(v.z, r));
            acc[3] = Reduction::combine(acc[3], Reduction::lift(v.w, r));
        }
    }
}
