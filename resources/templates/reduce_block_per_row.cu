// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// One block per row. The block's threads stride over the row, kVec consecutive elements per load
// (float4 when kVec is 4), each keeping one partial; the partials meet in a warp-shuffle tree and
// then across warps through shared memory. Loads coalesce, and a sum rounds like a tree.
//
// @problem {{PROBLEM}}
// @precision fp32
// @launch reduce_rows grid({{GRID}}) block({{BLOCK}}) args({{IN_LAUNCH}}, {{OUT}})

constexpr long long kRows = {{ROWS}}; // rows (outputs)
constexpr long long kLen = {{LEN}};   // elements per row
constexpr int kBlock = {{BLOCK}};     // threads per block
constexpr int kVec = {{VEC}};         // floats per load: 4 (float4) or 1

{{INPUT}}
{{REDUCTION}}
{{>reduction_tree}}

extern "C" __global__ void __launch_bounds__(kBlock)
reduce_rows({{IN_PARAMS}}, Reduction::Out* __restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    const long long row = blockIdx.x;
    const long long base = row * kLen;
    Reduction::Acc acc = fold_row<kBlock>(in, base, kLen, threadIdx.x);
    acc = block_reduce<kBlock>(acc);
    if (threadIdx.x == 0)
        out[row] = Reduction::finish(acc);
}
