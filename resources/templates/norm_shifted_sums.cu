// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// One block per row. A single read gives the sums of d and d^2 for d = x - shift, the shift being
// the row's first element: the sums stay near the spread of the data, so the variance
// E[d^2] - E[d]^2 does not cancel away even for a large mean, and the double accumulators keep
// the rounding far below the tolerance. A second read normalizes with float4 loads and stores.
//
// @problem {{PROBLEM}}
// @precision fp32
// @launch norm_shifted grid({{ROWS}}) block({{BLOCK}}) args({{IN_LAUNCH}}{{OUT_LAUNCH}}, {{OUT}})

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

__device__ __forceinline__ float4 minus(float4 v, float s) { return make_float4(v.x - s, v.y - s, v.z - s, v.w - s); }

__device__ __forceinline__ void store4(float* p, long long i, float4 v)
{
    *reinterpret_cast<float4*>(p + i) = v;
}

extern "C" __global__ void __launch_bounds__(kBlock)
norm_shifted({{IN_PARAMS}}{{OUT_PARAMS}}, float* __restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    const Output output{ {{OUT_ARGS}} };
    const long long base = (long long)blockIdx.x * kLen;
    const float shift = in.at(base); // the row's first element

    double s1 = 0.0, s2 = 0.0;
    if constexpr (kVec == 4) {
        for (long long j = 4 * threadIdx.x; j < kLen; j += 4 * kBlock) {
            const float4 d = minus(in.at4(base + j), shift);
            s1 += double(d.x) + double(d.y) + double(d.z) + double(d.w);
            s2 += double(d.x) * d.x + double(d.y) * d.y + double(d.z) * d.z + double(d.w) * d.w;
        }
    } else {
        for (long long j = threadIdx.x; j < kLen; j += kBlock) {
            const double d = in.at(base + j) - shift;
            s1 += d;
            s2 += d * d;
        }
    }
    const double mean_d = block_sum(s1) / kLen;
    const double var = fmax(block_sum(s2) / kLen - mean_d * mean_d, 0.0);
    const float mean = float(mean_d); // of x - shift
    const float rstd = float(1.0 / sqrt(var + kEps));

    if constexpr (kVec == 4) {
        for (long long j = 4 * threadIdx.x; j < kLen; j += 4 * kBlock) {
            const float4 d = minus(minus(in.at4(base + j), shift), mean);
            store4(out, base + j, output.at4(base + j, make_float4(d.x * rstd, d.y * rstd, d.z * rstd, d.w * rstd)));
        }
    } else {
        for (long long j = threadIdx.x; j < kLen; j += kBlock)
            out[base + j] = output.at(base + j, ((in.at(base + j) - shift) - mean) * rstd);
    }
}
