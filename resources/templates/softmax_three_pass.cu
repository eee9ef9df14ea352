// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// One block per row, three passes over it: the row's maximum, the sum of exp(x - max), then the
// outputs. Each thread strides over the row keeping an fp32 partial; the partials meet in a
// warp-shuffle tree and across warps through shared memory, so a sum's rounding error grows with
// log(len), not len. Subtracting the maximum keeps exp in range.
//
// @problem {{PROBLEM}}
// @precision fp32
// @launch softmax_rows grid({{ROWS}}) block({{BLOCK}}) args({{IN_LAUNCH}}, {{OUT}})

constexpr long long kRows = {{ROWS}};          // rows
constexpr long long kLen = {{LEN}};            // elements per row
constexpr int kBlock = {{BLOCK}};              // threads per block
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

__device__ __forceinline__ float warp_max(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v = fmaxf(v, __shfl_xor_sync(kFullMask, v, offset));
    return v;
}

__device__ __forceinline__ float warp_sum(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(kFullMask, v, offset);
    return v;
}

// Block-wide reductions; every thread gets the result.
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

extern "C" __global__ void __launch_bounds__(kBlock)
softmax_rows({{IN_PARAMS}}, float* __restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    const long long base = (long long)blockIdx.x * kLen;

    float m = kLowest;
    for (long long j = threadIdx.x; j < kLen; j += kBlock)
        m = fmaxf(m, in.at(base + j));
    m = block_max(m);

    float s = 0.0f;
    for (long long j = threadIdx.x; j < kLen; j += kBlock)
        s += expf(in.at(base + j) - m);
    const float scale = row_scale(block_sum(s));

    for (long long j = threadIdx.x; j < kLen; j += kBlock)
        out[base + j] = softmax_out(in.at(base + j), m, scale);
}
