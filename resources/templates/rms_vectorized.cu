// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// One block per row. The first read sums the squares (float4 loads, accumulated in double), the
// block reduces them with warp shuffles, and the second read scales each value by
// rsqrt(mean square + eps) and the weight, with float4 loads and stores.
//
// @problem {{PROBLEM}}
// @precision fp32
// @launch rms_rows grid({{ROWS}}) block({{BLOCK}}) args({{IN_LAUNCH}}{{OUT_LAUNCH}}, {{OUT}})

constexpr long long kRows = {{ROWS}};  // rows
constexpr long long kLen = {{LEN}};    // elements per row (the normalized dims)
constexpr int kBlock = {{BLOCK}};      // threads per block
constexpr int kVec = {{VEC}};          // floats per load: 4 (float4) or 1
constexpr int kWarps = kBlock / 32;
constexpr double kEps = {{EPS}};
constexpr unsigned kFullMask = 0xffffffffu;

{{INPUT}}
{{OUTPUT}}
{{>block_sum_double}}

__device__ __forceinline__ void store4(float* p, long long i, float4 v)
{
    *reinterpret_cast<float4*>(p + i) = v;
}

extern "C" __global__ void __launch_bounds__(kBlock)
rms_rows({{IN_PARAMS}}{{OUT_PARAMS}}, float* __restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    const Output output{ {{OUT_ARGS}} };
    const long long base = (long long)blockIdx.x * kLen;

    double squares = 0.0;
    if constexpr (kVec == 4) {
        for (long long j = 4 * threadIdx.x; j < kLen; j += 4 * kBlock) {
            const float4 x = in.at4(base + j);
            squares += double(x.x) * x.x + double(x.y) * x.y + double(x.z) * x.z + double(x.w) * x.w;
        }
    } else {
        for (long long j = threadIdx.x; j < kLen; j += kBlock) {
            const double x = in.at(base + j);
            squares += x * x;
        }
    }
    const float rstd = float(1.0 / sqrt(block_sum(squares) / kLen + kEps));

    if constexpr (kVec == 4) {
        for (long long j = 4 * threadIdx.x; j < kLen; j += 4 * kBlock) {
            const float4 x = in.at4(base + j);
            store4(out, base + j, output.at4(base + j, make_float4(x.x * rstd, x.y * rstd, x.z * rstd, x.w * rstd)));
        }
    } else {
        for (long long j = threadIdx.x; j < kLen; j += kBlock)
            out[base + j] = output.at(base + j, in.at(base + j) * rstd);
    }
}
