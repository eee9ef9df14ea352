// A row, or a block's chunk of one, held in registers: each thread keeps kGroups float4s of
// d = x - shift, kBlock float4s apart so loads coalesce, over kHeldGroups float4s from `base`.
// Needs kGroups, kBlock, kHeldGroups, Input and Output.
__device__ __forceinline__ float4 minus(float4 v, float s) { return make_float4(v.x - s, v.y - s, v.z - s, v.w - s); }
__device__ __forceinline__ float sum4(float4 v) { return (v.x + v.y) + (v.z + v.w); }
__device__ __forceinline__ float squares4(float4 v) { return (v.x * v.x + v.y * v.y) + (v.z * v.z + v.w * v.w); }

// Whether this thread's group g lies in the held span.
__device__ __forceinline__ bool held(int g) { return (long long)g * kBlock + threadIdx.x < kHeldGroups; }

// d = x - shift; groups past the span are zeros and never used.
__device__ __forceinline__ void load_held(const Input& in, long long base, float shift, float4 (&d)[kGroups])
{
#pragma unroll
    for (int g = 0; g < kGroups; ++g)
        d[g] = held(g) ? minus(in.at4(base + 4 * ((long long)g * kBlock + threadIdx.x)), shift)
                       : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
}

// This thread's sum of d, and of (d - mean)^2.
__device__ __forceinline__ float held_sum(const float4 (&d)[kGroups])
{
    float s = 0.0f;
#pragma unroll
    for (int g = 0; g < kGroups; ++g)
        if (held(g))
            s += sum4(d[g]);
    return s;
}
__device__ __forceinline__ float held_squares(const float4 (&d)[kGroups], float mean)
{
    float s = 0.0f;
#pragma unroll
    for (int g = 0; g < kGroups; ++g)
        if (held(g))
            s += squares4(minus(d[g], mean));
    return s;
}

// (d - mean) * rstd through Output, 16 bytes at a time.
__device__ __forceinline__ void store_held(const Output& output, float* out, long long base, const float4 (&d)[kGroups],
                                           float mean, float rstd)
{
#pragma unroll
    for (int g = 0; g < kGroups; ++g) {
        if (!held(g))
            continue;
        const long long i = base + 4 * ((long long)g * kBlock + threadIdx.x);
        const float4 c = minus(d[g], mean);
        *reinterpret_cast<float4*>(out + i) = output.at4(i, make_float4(c.x * rstd, c.y * rstd, c.z * rstd, c.w * rstd));
    }
}
