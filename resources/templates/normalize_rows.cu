// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// Elementwise ops around a reduction of each row (x / sum(|x|), x / ||x||, x * rsqrt(mean(x^2))):
// one block per row. The first read reduces what Input computes from the row (double for sums),
// combined across the block in a fixed order; the second read gives every element of the row to
// Output together with the row's value. The row is read twice; rows of up to a few MB come back
// from L2 the second time.
//
// @problem {{PROBLEM}}
// @precision fp32
// @launch normalize_rows grid({{ROWS}}) block({{BLOCK}}) args({{IN_LAUNCH}}{{OUT_LAUNCH}}, {{OUT}})

constexpr long long kRows = {{ROWS}};  // rows
constexpr long long kLen = {{LEN}};    // elements per row
constexpr int kBlock = {{BLOCK}};      // threads per block
constexpr int kVec = {{VEC}};          // floats per load: 4 (float4) or 1

{{INPUT}}
{{REDUCTION}}
{{OUTPUT}}
{{>reduction_tree}}

extern "C" __global__ void __launch_bounds__(kBlock)
normalize_rows({{IN_PARAMS}}{{OUT_PARAMS}}, float* __restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    const Output output{ {{OUT_ARGS}} };
    const long long base = (long long)blockIdx.x * kLen;

    const Reduction::Acc acc = fold_row<kBlock>(in, base, kLen, threadIdx.x);
    const float value = Reduction::finish(block_reduce<kBlock>(acc));

    if constexpr (kVec == 4) {
        const float4 value4 = make_float4(value, value, value, value);
        for (long long j = 4 * threadIdx.x; j < kLen; j += 4 * kBlock)
            *reinterpret_cast<float4*>(out + base + j) = output.at4(base + j, value4);
    } else {
        for (long long j = threadIdx.x; j < kLen; j += kBlock)
            out[base + j] = output.at(base + j, value);
    }
}
