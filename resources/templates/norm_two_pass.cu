// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// One block per row and exact statistics: a pass for the mean, a pass for the mean of
// (x - mean)^2, both accumulated in double and reduced with warp shuffles and shared memory, then
// a pass that normalizes and applies the output step (Output: the affine weight and bias, and
// any elementwise ops after the norm). RMSNorm (kCentre false) skips the mean and takes the mean
// square. Slow but hard to get wrong, even when the mean dwarfs the spread.
//
// @problem {{PROBLEM}}
// @precision fp32
// @launch norm_rows grid({{ROWS}}) block({{BLOCK}}) args({{IN_LAUNCH}}{{OUT_LAUNCH}}, {{OUT}})

constexpr long long kRows = {{ROWS}};  // rows
constexpr long long kLen = {{LEN}};    // elements per row (the normalized dims)
constexpr int kBlock = {{BLOCK}};      // threads per block
constexpr int kWarps = kBlock / 32;
constexpr double kEps = {{EPS}};
constexpr bool kCentre = {{CENTRE}};   // LayerNorm subtracts the mean; RMSNorm does not
constexpr unsigned kFullMask = 0xffffffffu;

{{INPUT}}
{{OUTPUT}}
{{>block_sum_double}}

extern "C" __global__ void __launch_bounds__(kBlock)
norm_rows({{IN_PARAMS}}{{OUT_PARAMS}}, float* __restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    const Output output{ {{OUT_ARGS}} };
    const long long base = (long long)blockIdx.x * kLen;

    double mean = 0.0;
    if constexpr (kCentre) {
        double sum = 0.0;
        for (long long j = threadIdx.x; j < kLen; j += kBlock)
            sum += in.at(base + j);
        mean = block_sum(sum) / kLen;
    }
    double squares = 0.0;
    for (long long j = threadIdx.x; j < kLen; j += kBlock) {
        const double d = in.at(base + j) - mean;
        squares += d * d;
    }
    const double rstd = 1.0 / sqrt(block_sum(squares) / kLen + kEps);

    for (long long j = threadIdx.x; j < kLen; j += kBlock)
        out[base + j] = output.at(base + j, float((in.at(base + j) - mean) * rstd));
}
