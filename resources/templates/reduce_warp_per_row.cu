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
__device__ __forceinline__ Reduction::Acc warp_reduce(Reduction::Acc v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v = Reduction::combine(v, Reduction::shfl_xor(v, offset));
    return v;
}

extern "C" __global__ void __launch_bounds__(kBlock)
reduce_rows_warp({{IN_PARAMS}}, Reduction::Out* __restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    const long long row = (long long)blockIdx.x * kWarps + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (row >= kRows)
        return; // the whole warp leaves together, so the shuffles below stay full
    const long long base = row * kLen;
    Reduction::Acc acc = Reduction::identity();
    if constexpr (kVec == 4) {
        for (long long j = 4 * lane; j < kLen; j += 4 * 32) {
            const float4 v = in.at4(base + j);
            acc = Reduction::combine(acc, Reduction::lift(v.x, j));
            acc = Reduction::combine(acc, Reduction::lift(v.y, j + 1));
            acc = Reduction::combine(acc, Reduction::lift(v.z, j + 2));
            acc = Reduction::combine(acc, Reduction::lift(v.w, j + 3));
        }
    } else {
        for (long long j = lane; j < kLen; j += 32)
            acc = Reduction::combine(acc, Reduction::lift(in.at(base + j), j));
    }
    acc = warp_reduce(acc);
    if (lane == 0)
        out[row] = Reduction::finish(acc);
}
