// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// One block per row. A single read gives the mean and variance: each thread runs Welford's
// update on its values (four at a time from float4 loads: their exact mean and M2, merged in),
// and the threads' (count, mean, M2) triples merge with Chan's formula through warp shuffles and
// shared memory. Values are taken relative to the row's first element, so a mean of 1000 with a
// spread of 0.1 costs no digits. A second read normalizes.
//
// @problem {{PROBLEM}}
// @precision fp32
// @launch norm_welford grid({{ROWS}}) block({{BLOCK}}) args({{IN_LAUNCH}}{{OUT_LAUNCH}}, {{OUT}})

constexpr long long kRows = {{ROWS}};  // rows
constexpr long long kLen = {{LEN}};    // elements per row (the normalized dims)
constexpr int kBlock = {{BLOCK}};      // threads per block
constexpr int kVec = {{VEC}};          // floats per load: 4 (float4) or 1
constexpr int kWarps = kBlock / 32;
constexpr float kEps = {{EPS}};
constexpr unsigned kFullMask = 0xffffffffu;

{{INPUT}}
{{OUTPUT}}
// Count, mean and sum of squared deviations of the values seen so far.
struct Welford {
    float count;
    float mean;
    float m2;
};

// Chan et al.: the statistics of two disjoint sets from theirs.
__device__ __forceinline__ Welford merge(Welford a, Welford b)
{
    if (b.count == 0.0f)
        return a;
    if (a.count == 0.0f)
        return b;
    const float count = a.count + b.count;
    const float delta = b.mean - a.mean;
    const float wb = b.count / count;
    return {count, a.mean + delta * wb, a.m2 + b.m2 + delta * delta * a.count * wb};
}

__device__ __forceinline__ void push(Welford& w, float d)
{
    w.count += 1.0f;
    const float delta = d - w.mean;
    w.mean += delta / w.count;
    w.m2 += delta * (d - w.mean);
}

__device__ __forceinline__ void push4(Welford& w, float4 d)
{
    const float mean4 = 0.25f * ((d.x + d.y) + (d.z + d.w));
    const float ex = d.x - mean4, ey = d.y - mean4, ez = d.z - mean4, ew = d.w - mean4;
    w = merge(w, {4.0f, mean4, (ex * ex + ey * ey) + (ez * ez + ew * ew)});
}

__device__ __forceinline__ Welford warp_merge(Welford w)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        w = merge(w, {__shfl_xor_sync(kFullMask, w.count, offset), __shfl_xor_sync(kFullMask, w.mean, offset),
                      __shfl_xor_sync(kFullMask, w.m2, offset)});
    return w;
}

// The block's statistics; every thread gets them.
__device__ Welford block_merge(Welford w)
{
    __shared__ Welford partial[kWarps];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    w = warp_merge(w);
    if (lane == 0)
        partial[warp] = w;
    __syncthreads();
    return warp_merge(lane < kWarps ? partial[lane] : Welford{0.0f, 0.0f, 0.0f});
}

__device__ __forceinline__ float4 minus(float4 v, float s) { return make_float4(v.x - s, v.y - s, v.z - s, v.w - s); }

__device__ __forceinline__ void store4(float* p, long long i, float4 v)
{
    *reinterpret_cast<float4*>(p + i) = v;
}

extern "C" __global__ void __launch_bounds__(kBlock)
norm_welford({{IN_PARAMS}}{{OUT_PARAMS}}, float* __restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    const Output output{ {{OUT_ARGS}} };
    const long long base = (long long)blockIdx.x * kLen;
    const float shift = in.at(base); // the row's first element

    Welford w{0.0f, 0.0f, 0.0f};
    if constexpr (kVec == 4) {
        for (long long j = 4 * threadIdx.x; j < kLen; j += 4 * kBlock)
            push4(w, minus(in.at4(base + j), shift));
    } else {
        for (long long j = threadIdx.x; j < kLen; j += kBlock)
            push(w, in.at(base + j) - shift);
    }
    w = block_merge(w);
    const float mean = w.mean; // of x - shift
    const float rstd = 1.0f / sqrtf(w.m2 / kLen + kEps);

    if constexpr (kVec == 4) {
        for (long long j = 4 * threadIdx.x; j < kLen; j += 4 * kBlock) {
            const float4 d = minus(minus(in.at4(base + j), shift), mean);
            store4(out, base + j, output.at4(base + j, make_float4(d.x * rstd, d.y * rstd, d.z * rstd, d.w * rstd)));
        }
    } else {
        for (long long j = threadIdx.x; j < kLen; j += kBlock)
            out[base + j] = output.at(base + j, ((in.at(base + j) - shift) - mean) * rstd);
    }
}
