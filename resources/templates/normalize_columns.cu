// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// Elementwise ops around a reduction along a dim that is not the last (RMSNorm over the channels
// of an NCHW tensor): the tensor is [kOuter, kLen, kInner] and each output column (outer, c)
// reduces kLen values kInner apart. Each thread takes kVec adjacent columns, so a warp's loads are
// contiguous; it walks down its columns once to reduce them (double for sums) and once more to
// give each element to Output with its column's value. The second walk finds most of the
// block's columns in L2.
//
// @problem {{PROBLEM}}
// @precision fp32
// @launch normalize_columns grid({{GRID}}) block({{BLOCK}}) args({{IN_LAUNCH}}{{OUT_LAUNCH}}, {{OUT}})

constexpr long long kOuter = {{OUTER}};            // slices before the reduced dim
constexpr long long kLen = {{LEN}};                // reduced length
constexpr long long kInner = {{INNER}};            // columns per slice
constexpr int kBlock = {{BLOCK}};                  // threads per block
constexpr int kVec = {{VEC}};                      // adjacent columns per thread: 4 (float4) or 1
constexpr long long kGroups = kInner / kVec;       // column groups per slice

{{INPUT}}
{{REDUCTION}}
{{OUTPUT}}
extern "C" __global__ void __launch_bounds__(kBlock)
normalize_columns({{IN_PARAMS}}{{OUT_PARAMS}}, float* __restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    const Output output{ {{OUT_ARGS}} };
    const long long g = (long long)blockIdx.x * kBlock + threadIdx.x; // the column group
    if (g >= kOuter * kGroups)
        return;
    const long long base = g / kGroups * kLen * kInner + g % kGroups * kVec;
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
    if constexpr (kVec == 4) {
        const float4 value = make_float4(Reduction::finish(acc[0]), Reduction::finish(acc[1]),
                                         Reduction::finish(acc[2]), Reduction::finish(acc[3]));
        // Unrolled less than the first walk: an Output that divides calls division's slow path,
        // and four unrolled calls spill.
#pragma unroll 2
        for (long long r = 0; r < kLen; ++r)
            *reinterpret_cast<float4*>(out + base + r * kInner) = output.at4(base + r * kInner, value);
    } else {
        const float value = Reduction::finish(acc[0]);
#pragma unroll 2
        for (long long r = 0; r < kLen; ++r)
            out[base + r * kInner] = output.at(base + r * kInner, value);
    }
}
