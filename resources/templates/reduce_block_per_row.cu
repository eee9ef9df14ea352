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
constexpr int kWarps = kBlock / 32;
constexpr unsigned kFullMask = 0xffffffffu;

{{INPUT}}
{{REDUCTION}}
__device__ __forceinline__ Reduction::Acc warp_reduce(Reduction::Acc v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v = Reduction::combine(v, Reduction::shfl_xor(v, offset));
    return v;
}

// The whole block's reduction; every thread gets it.
__device__ Reduction::Acc block_reduce(Reduction::Acc v)
{
    __shared__ Reduction::Acc partial[kWarps];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_reduce(v);
    if (lane == 0)
        partial[warp] = v;
    __syncthreads();
    v = lane < kWarps ? partial[lane] : Reduction::identity();
    return warp_reduce(v);
}

extern "C" __global__ void __launch_bounds__(kBlock)
reduce_rows({{IN_PARAMS}}, Reduction::Out* __restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    const long long row = blockIdx.x;
    const long long base = row * kLen;
    Reduction::Acc acc = Reduction::identity();
    if constexpr (kVec == 4) {
        for (long long j = 4 * threadIdx.x; j < kLen; j += 4 * kBlock) {
            const float4 v = in.at4(base + j);
            acc = Reduction::combine(acc, Reduction::lift(v.x, j));
            acc = Reduction::combine(acc, Reduction::lift(v.y, j + 1));
            acc = Reduction::combine(acc, Reduction::lift(v.z, j + 2));
            acc = Reduction::combine(acc, Reduction::lift(v.w, j + 3));
        }
    } else {
        for (long long j = threadIdx.x; j < kLen; j += kBlock)
            acc = Reduction::combine(acc, Reduction::lift(in.at(base + j), j));
    }
    acc = block_reduce(acc);
    if (threadIdx.x == 0)
        out[row] = Reduction::finish(acc);
}
