// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// One block per row computes all kFolds reductions of the row in one pass over memory. Each thread
// strides over the row, kVec consecutive elements at a time (float4 when kVec is 4); every
// reduction's Input struct reads the same tensors at the same positions, so each element is loaded
// once and feeds every reduction. Each one's accumulator (a double for sums, a running maximum
// and a sum of exponentials for a logsumexp) meets in a warp-shuffle tree and then across warps
// through shared memory; thread 0 finishes each (its elementwise ops) and writes its buffer.
//
// @problem {{PROBLEM}}
// @precision fp32
// @launch reduce_rows_fused grid({{GRID}}) block({{BLOCK}}) args({{IN_LAUNCH}}, {{OUT_LAUNCH}})

constexpr long long kRows = {{ROWS}}; // rows
constexpr long long kLen = {{LEN}};   // elements per row
constexpr int kBlock = {{BLOCK}};     // threads per block
constexpr int kVec = {{VEC}};         // floats per load: 4 (float4) or 1
constexpr int kFolds = {{FOLDS}};     // reductions per row

{{INPUTS}}
{{REDUCTIONS}}
// kVec elements of `in` from position i folded into a, one after another.
template <class R, class In>
__device__ __forceinline__ void fold_into(typename R::Acc& a, const In& in, long long i)
{
    if constexpr (kVec == 4) {
        a = R::fold4(a, in.at4(i));
    } else {
        a = R::combine(a, R::lift(in.at(i), i));
    }
}

// Every thread's accumulator combined; thread 0 holds the block's. Each reduction has its own
// shared slots (one array per R), so the reductions do not wait on each other's reads.
template <class R>
__device__ __forceinline__ typename R::Acc block_combine(typename R::Acc a)
{
    constexpr int kWarps = kBlock / 32;
    __shared__ typename R::Acc warpAccs[kWarps];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (int offset = 16; offset > 0; offset >>= 1)
        a = R::combine(a, R::shfl_xor(a, offset));
    if (lane == 0)
        warpAccs[warp] = a;
    __syncthreads();
    if (warp == 0) {
        a = lane < kWarps ? warpAccs[lane] : R::identity();
        for (int offset = 16; offset > 0; offset >>= 1)
            a = R::combine(a, R::shfl_xor(a, offset));
    }
    return a;
}

extern "C" __global__ void __launch_bounds__(kBlock)
reduce_rows_fused({{IN_PARAMS}}, {{OUT_PARAMS}})
{
{{MAKE_INPUTS}}
    const long long row = blockIdx.x;
    const long long base = row * kLen;
{{ACCS}}
    for (long long j = (long long)kVec * threadIdx.x; j < kLen; j += (long long)kVec * kBlock) {
{{FOLD}}
    }
{{COMBINE}}
    if (threadIdx.x == 0) {
{{STORES}}
    }
}
