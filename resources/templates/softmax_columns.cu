// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// The softmax dim is not the last: the input is seen as [kOuter, kLen, kInner] and every column
// (one outer index, one inner index) is normalized down its kLen elements. Consecutive threads
// take consecutive groups of kVec columns, so a warp's loads form one contiguous segment; each
// thread keeps a running (max, sum) per column in one read, then reads again to write.
//
// @problem {{PROBLEM}}
// @precision fp32
// @launch softmax_columns grid({{GRID}}) block({{BLOCK}}) args({{IN_LAUNCH}}{{OUT_LAUNCH}}, {{OUT}})

{{>column_groups}}

{{INPUT}}
{{OUTPUT}}
{{>softmax_out}}
{{>softmax_max_sum}}

extern "C" __global__ void __launch_bounds__(kBlock)
softmax_columns({{IN_PARAMS}}{{OUT_PARAMS}}, float* __restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    const Output output{ {{OUT_ARGS}} };
    long long base, column;
    if (!column_group(base, column))
        return;

    MaxSum st[kVec];
#pragma unroll
    for (int c = 0; c < kVec; ++c)
        st[c] = MaxSum{kLowest, 0.0f};
#pragma unroll 4
    for (long long r = 0; r < kLen; ++r) {
        if constexpr (kVec == 4) {
            const float4 x = in.at4(base + r * kInner);
            push(st[0], x.x), push(st[1], x.y), push(st[2], x.z), push(st[3], x.w);
        } else {
            push(st[0], in.at(base + r * kInner));
        }
    }
    float scale[kVec];
#pragma unroll
    for (int c = 0; c < kVec; ++c)
        scale[c] = row_scale(st[c].sum);

#pragma unroll 4
    for (long long r = 0; r < kLen; ++r) {
        const long long i = base + r * kInner;
        if constexpr (kVec == 4) {
            const float4 x = in.at4(i);
            store4(out, i, output.at4(i, make_float4(softmax_out(x.x, st[0].max, scale[0]), softmax_out(x.y, st[1].max, scale[1]),
                                       softmax_out(x.z, st[2].max, scale[2]), softmax_out(x.w, st[3].max, scale[3]))));
        } else {
            out[i] = output.at(i, softmax_out(in.at(i), st[0].max, scale[0]));
        }
    }
}
