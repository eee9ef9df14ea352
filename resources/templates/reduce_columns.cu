// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// The input is seen as [kOuter, kLen, kInner] and reduced over kLen. Consecutive threads take
// consecutive groups of kVec output columns, so a warp's loads form one contiguous segment, and
// each thread walks down the kLen rows of its columns with kVec accumulators.
//
// @problem {{PROBLEM}}
// @precision fp32
// @launch reduce_columns grid({{GRID}}) block({{BLOCK}}) args({{IN_LAUNCH}}, {{OUT}})

constexpr long long kOuter = {{OUTER}};            // slices before the reduced dims
constexpr long long kLen = {{LEN}};                // reduced length
constexpr long long kInner = {{INNER}};            // columns per slice
constexpr int kBlock = {{BLOCK}};                  // threads per block
constexpr int kVec = {{VEC}};                      // adjacent columns per thread: 4 (float4) or 1
constexpr long long kGroups = kInner / kVec;       // column groups per slice

{{INPUT}}
{{REDUCTION}}
extern "C" __global__ void __launch_bounds__(kBlock)
reduce_columns({{IN_PARAMS}}, Reduction::Out* __restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    const long long g = (long long)blockIdx.x * kBlock + threadIdx.x; // the column group
    if (g >= kOuter * kGroups)
        return;
    const long long outer = g / kGroups, col = (g % kGroups) * kVec;
    const long long base = outer * kLen * kInner + col;
    Reduction::Acc acc[kVec];
#pragma unroll
    for (int c = 0; c < kVec; ++c)
        acc[c] = Reduction::identity();
#pragma unroll 4
    for (long long r = 0; r < kLen; ++r) {
        if constexpr (kVec == 4) {
            const float4 v = in.at4(base + r * kInner);
            acc[0] = Reduction::combine(acc[0], Reduction::lift(v.x, r));
            acc[1] = Reduction::combine(acc[1], Reduction::lift(v.y, r));
            acc[2] = Reduction::combine(acc[2], Reduction::lift(v.z, r));
            acc[3] = Reduction::combine(acc[3], Reduction::lift(v.w, r));
        } else {
            acc[0] = Reduction::combine(acc[0], Reduction::lift(in.at(base + r * kInner), r));
        }
    }
#pragma unroll
    for (int c = 0; c < kVec; ++c)
        out[outer * kInner + col + c] = Reduction::finish(acc[c]);
}
