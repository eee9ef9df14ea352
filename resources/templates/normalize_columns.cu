// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// Elementwise ops around a reduction along a dim that is not the last (RMSNorm over the channels
// of an NCHW tensor): the tensor is [kOuter, kLen, kInner] and each output column (outer, c)
// reduces kLen values kInner apart. Each thread takes kVec adjacent columns, so a warp's loads are
// contiguous; it walks down its columns once to reduce them (double for sums) and once more to
// give each element to Output with its column's value. The second walk finds most of the
// block's columns in L2. With HOLD (normalize_columns_held), a thread keeps the kLen x kVec
// values it loads in registers and the second walk reads none of them again: x is read once
// where the columns in flight are too many for L2.
//
// @problem {{PROBLEM}}
// @precision fp32
// @launch normalize_columns grid({{GRID}}) block({{BLOCK}}) args({{IN_LAUNCH}}{{OUT_LAUNCH}}, {{OUT}})

{{>column_groups}}

{{INPUT}}
{{REDUCTION}}
{{>reduction_tree}}

{{OUTPUT}}
extern "C" __global__ void __launch_bounds__(kBlock)
normalize_columns({{IN_PARAMS}}{{OUT_PARAMS}}, float* __restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    const Output output{ {{OUT_ARGS}} };
    long long base, column;
    if (!column_group(base, column))
        return;
{{#HOLD}}
    // The columns in registers: raw values of the held tensor, folded as Input makes them.
    static_assert(kLen * kVec <= {{MOST_HELD}}, "at most MOST_HELD held values a thread");
    float held[kLen][kVec];
    Reduction::Acc acc[kVec];
#pragma unroll
    for (int c = 0; c < kVec; ++c) acc[c] = Reduction::identity();
#pragma unroll
    for (int r = 0; r < kLen; ++r)
#pragma unroll
        for (int c = 0; c < kVec; ++c) {
            held[r][c] = in.raw(base + r * kInner + c);
            acc[c] = Reduction::combine(acc[c], Reduction::lift(in.at_held(base + r * kInner + c, held[r][c]), r));
        }
    float value[kVec];
#pragma unroll
    for (int c = 0; c < kVec; ++c) value[c] = Reduction::finish(acc[c]);
#pragma unroll
    for (int r = 0; r < kLen; ++r)
#pragma unroll
        for (int c = 0; c < kVec; ++c)
            out[base + r * kInner + c] = output.at_held(base + r * kInner + c, held[r][c], value[c]);
{{/HOLD}}
{{^HOLD}}
    Reduction::Acc acc[kVec];
    fold_columns<kInner>(in, base, 0, kLen, acc);
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
{{/HOLD}}
}
