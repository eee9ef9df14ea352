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
// @launch softmax_rows grid({{ROWS}}) block({{BLOCK}}) args({{IN_LAUNCH}}{{OUT_LAUNCH}}, {{OUT}})

constexpr long long kRows = {{ROWS}};          // rows
constexpr long long kLen = {{LEN}};            // elements per row
constexpr int kBlock = {{BLOCK}};              // threads per block

{{INPUT}}
{{OUTPUT}}
{{>softmax_out}}
{{>block_max_sum}}

extern "C" __global__ void __launch_bounds__(kBlock)
softmax_rows({{IN_PARAMS}}{{OUT_PARAMS}}, float* __restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    const Output output{ {{OUT_ARGS}} };
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
        out[base + j] = output.at(base + j, softmax_out(in.at(base + j), m, scale));
}
