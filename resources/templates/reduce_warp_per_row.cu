// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// One warp per row, kWarps rows per block. The warp's lanes stride over the row, kVec consecutive
// elements per load, and combine with five xor-shuffles: no shared memory, no __syncthreads.
//
// @problem {{PROBLEM}}
// @precision fp32
// @launch reduce_rows_warp grid({{GRID}}) block({{THREADS}}) args({{IN_LAUNCH}}, {{OUT}})

constexpr long long kRows = {{ROWS}}; // rows (outputs)
constexpr long long kLen = {{LEN}};   // elements per row
constexpr int kWarps = {{WARPS}};     // rows per block
constexpr int kVec = {{VEC}};         // floats per load: 4 (float4) or 1
constexpr int kBlock = 32 * kWarps;

{{INPUT}}
{{REDUCTION}}
{{>reduction_tree}}

extern "C" __global__ void __launch_bounds__(kBlock)
reduce_rows_warp({{IN_PARAMS}}, Reduction::Out* __restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    const long long row = (long long)blockIdx.x * kWarps + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= kRows)
        return; // the whole warp leaves together, so the shuffles below stay full
    const long long base = row * kLen;
    Reduction::Acc acc = fold_row<32>(in, base, kLen, lane);
    acc = warp_reduce(acc);
    if (lane == 0)
        out[row] = Reduction::finish(acc);
}
