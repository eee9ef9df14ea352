// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// One block per row, and the row lives in registers: each thread loads kElems values (kGroups
// float4s, kBlock float4s apart so loads coalesce). The statistics come from registers in two
// exact passes, the mean of d = x - shift (shift: the row's first element) and then the mean of
// (d - mean)^2, and the normalized row is written from registers. One read and one write.
// RMSNorm (kCentre false) takes the mean square of x instead.
//
// @problem {{PROBLEM}}
// @precision fp32
// @launch norm_registers grid({{ROWS}}) block({{BLOCK}}) args({{IN_LAUNCH}}{{OUT_LAUNCH}}, {{OUT}})

constexpr long long kRows = {{ROWS}};       // rows
constexpr long long kLen = {{LEN}};         // elements per row (the normalized dims)
constexpr int kBlock = {{BLOCK}};           // threads per block
constexpr int kElems = {{ELEMS}};           // row values per thread
constexpr int kGroups = kElems / 4;         // float4s per thread
constexpr long long kHeldGroups = kLen / 4; // float4s per row
constexpr int kWarps = kBlock / 32;
constexpr float kEps = {{EPS}};
constexpr bool kCentre = {{CENTRE}};        // LayerNorm subtracts the mean; RMSNorm does not
constexpr unsigned kFullMask = 0xffffffffu;

{{INPUT}}
{{OUTPUT}}
{{>block_sum}}

{{>norm_row_registers}}

extern "C" __global__ void __launch_bounds__(kBlock)
norm_registers({{IN_PARAMS}}{{OUT_PARAMS}}, float* __restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    const Output output{ {{OUT_ARGS}} };
    const long long base = (long long)blockIdx.x * kLen;
    const float shift = kCentre ? in.at(base) : 0.0f;

    float4 d[kGroups]; // x - shift
    load_held(in, base, shift, d);
    const float mean = kCentre ? block_sum(held_sum(d)) / kLen : 0.0f; // of x - shift
    const float rstd = 1.0f / sqrtf(block_sum(held_squares(d, mean)) / kLen + kEps);
    store_held(output, out, base, d, mean, rstd);
}
