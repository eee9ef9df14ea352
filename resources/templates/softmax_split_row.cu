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
// @launch softmax_chunk_write grid({{GRID}}) block({{BLOCK}}) args({{IN_LAUNCH}}{{OUT_LAUNCH}}, stats, {{OUT}})

constexpr long long kRows = {{ROWS}};          // rows
constexpr long long kLen = {{LEN}};            // elements per row
constexpr int kSplit = {{SPLIT}};              // blocks per row
constexpr long long kChunk = kLen / kSplit;    // elements per block
constexpr int kBlock = {{BLOCK}};              // threads per block
constexpr int kVec = {{VEC}};                  // floats per load: 4 (float4) or 1

{{INPUT}}
{{OUTPUT}}
{{>softmax_out}}
{{>softmax_max_sum}}

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
softmax_chunk_write({{IN_PARAMS}}{{OUT_PARAMS}}, const float2* __restrict__ stats, float* __restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    const Output output{ {{OUT_ARGS}} };
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
            store4(out, base + j, output.at4(base + j, make_float4(softmax_out(x.x, m, scale), softmax_out(x.y, m, scale),
                                              softmax_out(x.z, m, scale), softmax_out(x.w, m, scale))));
        }
    } else {
        for (long long j = threadIdx.x; j < kChunk; j += kBlock)
            out[base + j] = output.at(base + j, softmax_out(in.at(base + j), m, scale));
    }
}
