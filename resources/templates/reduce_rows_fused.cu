// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// One block per row computes all kSums sums of the row in one pass over memory. Each thread
// strides over the row, kVec consecutive elements at a time (float4 when kVec is 4); every sum's
// Input struct reads the same tensors at the same positions, so each element is loaded once and
// feeds every sum. The sums accumulate in double, meet in one warp-shuffle tree each and then across
// warps through shared memory; thread 0 finishes each (its elementwise ops) and writes its buffer.
//
// @problem {{PROBLEM}}
// @precision fp32
// @launch reduce_rows_fused grid({{GRID}}) block({{BLOCK}}) args({{IN_LAUNCH}}, {{OUT_LAUNCH}})

constexpr long long kRows = {{ROWS}}; // rows
constexpr long long kLen = {{LEN}};   // elements per row
constexpr int kBlock = {{BLOCK}};     // threads per block
constexpr int kVec = {{VEC}};         // floats per load: 4 (float4) or 1
constexpr int kSums = {{SUMS}};       // sums per row

{{INPUTS}}
{{REDUCTIONS}}
// kVec elements of `in` from position i added to a, one after another.
template <class In>
__device__ __forceinline__ void fold_into(double& a, const In& in, long long i)
{
    if constexpr (kVec == 4) {
        const float4 v = in.at4(i);
        a += v.x;
        a += v.y;
        a += v.z;
        a += v.w;
    } else {
        a += in.at(i);
    }
}

// Every thread's sums combined; thread 0 holds the block's.
__device__ __forceinline__ void block_sums(double (&acc)[kSums])
{
    constexpr int kWarps = kBlock / 32;
    __shared__ double warpSums[kSums][kWarps];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
    for (int k = 0; k < kSums; ++k) {
        for (int offset = 16; offset > 0; offset >>= 1)
            acc[k] += __shfl_xor_sync(0xffffffffu, acc[k], offset);
        if (lane == 0)
            warpSums[k][warp] = acc[k];
    }
    __syncthreads();
    if (warp == 0) {
#pragma unroll
        for (int k = 0; k < kSums; ++k) {
            acc[k] = lane < kWarps ? warpSums[k][lane] : 0.0;
            for (int offset = 16; offset > 0; offset >>= 1)
                acc[k] += __shfl_xor_sync(0xffffffffu, acc[k], offset);
        }
    }
}

extern "C" __global__ void __launch_bounds__(kBlock)
reduce_rows_fused({{IN_PARAMS}}, {{OUT_PARAMS}})
{
{{MAKE_INPUTS}}
    const long long row = blockIdx.x;
    const long long base = row * kLen;
    double acc[kSums];
#pragma unroll
    for (int k = 0; k < kSums; ++k)
        acc[k] = 0.0;
    for (long long j = (long long)kVec * threadIdx.x; j < kLen; j += (long long)kVec * kBlock) {
{{FOLD}}
    }
    block_sums(acc);
    if (threadIdx.x == 0) {
{{STORES}}
    }
}
