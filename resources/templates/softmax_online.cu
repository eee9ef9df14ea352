// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// One block per row. The first read keeps a running (max, sum) per thread: when the maximum
// grows, the sum so far is rescaled by exp(old max - new max), so one read gives both statistics.
// Threads' pairs merge the same way through warp shuffles and shared memory. A second read writes
// the outputs: two reads of the row instead of three, kVec floats per load.
//
// @problem {{PROBLEM}}
// @precision fp32
// @launch softmax_online grid({{ROWS}}) block({{BLOCK}}) args({{IN_LAUNCH}}, {{OUT}})

constexpr long long kRows = {{ROWS}};          // rows
constexpr long long kLen = {{LEN}};            // elements per row
constexpr int kBlock = {{BLOCK}};              // threads per block
constexpr int kVec = {{VEC}};                  // floats per load: 4 (float4) or 1
constexpr int kWarps = kBlock / 32;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr float kLowest = -3.402823466e+38f;   // -FLT_MAX, where a running maximum starts

{{INPUT}}
{{^LOG}}
// softmax: exp(x - max) / sum, with 1 / sum taken once per row.
__device__ __forceinline__ float row_scale(float row_sum) { return 1.0f / row_sum; }
__device__ __forceinline__ float softmax_out(float x, float row_max, float scale) { return expf(x - row_max) * scale; }
{{/LOG}}
{{#LOG}}
// log_softmax: x - max - log(sum), with log(sum) taken once per row.
__device__ __forceinline__ float row_scale(float row_sum) { return logf(row_sum); }
__device__ __forceinline__ float softmax_out(float x, float row_max, float scale) { return x - row_max - scale; }
{{/LOG}}

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

extern "C" __global__ void __launch_bounds__(kBlock)
softmax_online({{IN_PARAMS}}, float* __restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    const long long base = (long long)blockIdx.x * kLen;

    MaxSum st{kLowest, 0.0f};
    if constexpr (kVec == 4) {
        for (long long j = 4 * threadIdx.x; j < kLen; j += 4 * kBlock)
            push4(st, in.at4(base + j));
    } else {
        for (long long j = threadIdx.x; j < kLen; j += kBlock)
            push(st, in.at(base + j));
    }
    st = block_merge(st);
    const float m = st.max, scale = row_scale(st.sum);

    if constexpr (kVec == 4) {
        for (long long j = 4 * threadIdx.x; j < kLen; j += 4 * kBlock) {
            const float4 x = in.at4(base + j);
            store4(out, base + j, make_float4(softmax_out(x.x, m, scale), softmax_out(x.y, m, scale),
                                              softmax_out(x.z, m, scale), softmax_out(x.w, m, scale)));
        }
    } else {
        for (long long j = threadIdx.x; j < kLen; j += kBlock)
            out[base + j] = softmax_out(in.at(base + j), m, scale);
    }
}
