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

{{>column_groups}}

{{INPUT}}
{{REDUCTION}}
{{>reduction_tree}}

extern "C" __global__ void __launch_bounds__(kBlock)
reduce_columns({{IN_PARAMS}}, Reduction::Out* __restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    long long base, column;
    if (!column_group(base, column))
        return;
    Reduction::Acc acc[kVec];
    fold_columns<kInner>(in, base, 0, kLen, acc);
#pragma unroll
    for (int c = 0; c < kVec; ++c)
        out[column + c] = Reduction::finish(acc[c]);
}
