// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// kSplit blocks per row. The first kernel computes the online (max, sum of exp(x - max)) of one
// chunk per block into scratch; the second merges the row's kSplit pairs (every block in the
// same order, so all agree) and writes its chunk. Two reads of the row, but kSplit times as many
// blocks as rows to keep the GPU busy.
//
// @problem {{PROBLEM}}
// @precision fp32
// @scratch stats float32 {{STAT_COUNT}}
// @launch softmax_chunk_stats grid({{GRID}}) block({{BLOCK}}) args({{IN_LAUNCH}}, stats)
// @launch softmax_chunk_write grid({{GRID}}) block({{BLOCK}}) args({{IN_LAUNCH}}, stats, {{OUT}})

constexpr long long kRows = {{ROWS}};          // rows
constexpr long long kLen = {{LEN}};            // elements per row
constexpr int kSplit = {{SPLIT}};              // blocks per row
constexpr long long kChunk = kLen / kSplit;    // elements per block
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

__device__ __forceinline__ void push(MaxSum& st, float x)
{
    if (x > st.max) {
        st.sum = st.sum * expf(st.max - x) + 1.0f;
        st.max = x;
    } else {
        st.sum += expf(x - st.max);
    }
}

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
softmax_chunk_stats({{IN_PARAMS}}, float2* __restrict__ stats)
{
    const Input in{ {{IN_ARGS}} };
    const long long row = blockIdx.x / kSplit;
    const long long base = row * kLen + (blockIdx.x % kSplit) * kChunk;
    MaxSum st{kLowest, 0.0f};
    if constexpr (kVec == 4) {
        for (long long j = 4 * threadIdx.x; j < kChunk; j += 4 * kBlock)
            push4(st, in.at4(base + j));
    } else {
        for (long long j = threadIdx.x; j < kChunk; j += kBlock)
            push(st, in.at(base + j));
    }
    st = block_merge(st);
    if (threadIdx.x == 0)
        stats[blockIdx.x] = make_float2(st.max, st.sum);
}

extern "C" __global__ void __launch_bounds__(kBlock)
softmax_chunk_write({{IN_PARAMS}}, const float2* __restrict__ stats, float* __restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    const long long row = blockIdx.x / kSplit;
    const long long base = row * kLen + (blockIdx.x % kSplit) * kChunk;

    MaxSum st{kLowest, 0.0f};
    for (int s = 0; s < kSplit; ++s) {
        const float2 chunk = stats[row * kSplit + s];
        st = merge(st, {chunk.x, chunk.y});
    }
    const float m = st.max, scale = row_scale(st.sum);

    if constexpr (kVec == 4) {
        for (long long j = 4 * threadIdx.x; j < kChunk; j += 4 * kBlock) {
            const float4 x = in.at4(base + j);
            store4(out, base + j, make_float4(softmax_out(x.x, m, scale), softmax_out(x.y, m, scale),
                                              softmax_out(x.z, m, scale), softmax_out(x.w, m, scale)));
        }
    } else {
        for (long long j = threadIdx.x; j < kChunk; j += kBlock)
            out[base + j] = softmax_out(in.at(base + j), m, scale);
    }
}
