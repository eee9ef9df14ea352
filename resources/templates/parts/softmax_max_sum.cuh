// Online softmax statistics: a (max, sum of exp(x - max)) pair that one read of the values builds
// and that merges with others in any grouping, so threads, warps, blocks and chunks of a row can
// each reduce their share. Needs kBlock.
constexpr int kWarps = kBlock / 32;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr float kLowest = -3.402823466e+38f;   // -FLT_MAX, where a running maximum starts

// A running maximum and the sum of exp(x - max) over the values seen so far.
struct MaxSum {
    float max;
    float sum;
};

__device__ __forceinline__ MaxSum merge(MaxSum a, MaxSum b)
{
    const float m = fmaxf(a.max, b.max);
    return {m, a.sum * expf(a.max - m) + b.sum * expf(b.max - m)};
}

// One value: one exp, and a rescale only when the maximum grows.
__device__ __forceinline__ void push(MaxSum& st, float x)
{
    if (x > st.max) {
        st.sum = st.sum * expf(st.max - x) + 1.0f;
        st.max = x;
    } else {
        st.sum += expf(x - st.max);
    }
}

// Four values: one rescale to their common maximum, four exps.
__device__ __forceinline__ void push4(MaxSum& st, float4 v)
{
    const float m = fmaxf(st.max, fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)));
    st.sum = st.sum * expf(st.max - m) + ((expf(v.x - m) + expf(v.y - m)) + (expf(v.z - m) + expf(v.w - m)));
    st.max = m;
}

__device__ __forceinline__ MaxSum warp_merge(MaxSum st)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        st = merge(st, {__shfl_xor_sync(kFullMask, st.max, offset), __shfl_xor_sync(kFullMask, st.sum, offset)});
    return st;
}

// The block's merged pair; every thread gets it.
__device__ MaxSum block_merge(MaxSum st)
{
    __shared__ MaxSum partial[kWarps];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    st = warp_merge(st);
    if (lane == 0)
        partial[warp] = st;
    __syncthreads();
    return warp_merge(lane < kWarps ? partial[lane] : MaxSum{kLowest, 0.0f});
}

__device__ __forceinline__ void store4(float* p, long long i, float4 v)
{
    *reinterpret_cast<float4*>(p + i) = v;
}
