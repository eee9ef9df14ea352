// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// A cumulative sum (or product) along a dim that is not the last: the tensor is
// [kOuter, kLen, kInner] and each column (outer, c) is scanned down its kLen values, kInner apart.
// Each thread takes kVec adjacent columns, so a warp's loads and stores are contiguous, and keeps
// their running values in double. With kReverse the columns are walked from the end.
//
// @problem {{PROBLEM}}
// @precision fp32
// @launch scan_columns grid({{GRID}}) block({{BLOCK}}) args({{IN_LAUNCH}}{{OUT_LAUNCH}}, {{OUT}})

{{>column_groups}}
constexpr bool kReverse = {{REVERSE}};        // from the end of the dim
constexpr bool kProduct = {{PRODUCT}};        // cumprod; else cumsum

{{INPUT}}
{{OUTPUT}}
__device__ __forceinline__ double combine(double a, double b) { return kProduct ? a * b : a + b; }

extern "C" __global__ void __launch_bounds__(kBlock)
scan_columns({{IN_PARAMS}}{{OUT_PARAMS}}, float* __restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    const Output output{ {{OUT_ARGS}} };
    long long base, column;
    if (!column_group(base, column))
        return;
    double run[kVec];
#pragma unroll
    for (int c = 0; c < kVec; ++c)
        run[c] = kProduct ? 1.0 : 0.0;
#pragma unroll 4
    for (long long step = 0; step < kLen; ++step) {
        const long long i = base + (kReverse ? kLen - 1 - step : step) * kInner;
        if constexpr (kVec == 4) {
            const float4 x = in.at4(i);
            run[0] = combine(run[0], x.x), run[1] = combine(run[1], x.y);
            run[2] = combine(run[2], x.z), run[3] = combine(run[3], x.w);
            *reinterpret_cast<float4*>(out + i) =
                output.at4(i, make_float4(float(run[0]), float(run[1]), float(run[2]), float(run[3])));
        } else {
            run[0] = combine(run[0], in.at(i));
            out[i] = output.at(i, float(run[0]));
        }
    }
}
