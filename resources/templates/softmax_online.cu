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
// @launch softmax_online grid({{ROWS}}) block({{BLOCK}}) args({{IN_LAUNCH}}{{OUT_LAUNCH}}, {{OUT}})

constexpr long long kRows = {{ROWS}};          // rows
constexpr long long kLen = {{LEN}};            // elements per row
constexpr int kBlock = {{BLOCK}};              // threads per block
constexpr int kVec = {{VEC}};                  // floats per load: 4 (float4) or 1

{{INPUT}}
{{OUTPUT}}
{{>softmax_out}}
{{>softmax_max_sum}}

extern "C" __global__ void __launch_bounds__(kBlock)
softmax_online({{IN_PARAMS}}{{OUT_PARAMS}}, float* __restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    const Output output{ {{OUT_ARGS}} };
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
            store4(out, base + j, output.at4(base + j, make_float4(softmax_out(x.x, m, scale), softmax_out(x.y, m, scale),
                                              softmax_out(x.z, m, scale), softmax_out(x.w, m, scale))));
        }
    } else {
        for (long long j = threadIdx.x; j < kLen; j += kBlock)
            out[base + j] = output.at(base + j, softmax_out(in.at(base + j), m, scale));
    }
}
