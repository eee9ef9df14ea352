// The mma.sync GEMM kernel (see mma_gemm_tiles): blocks walk the output in L2 groups, a
// kStages-deep cp.async pipeline feeds mma_stage, and with kPromote > 0 each kPromote K tiles
// summed on the tensor cores (whose fp32 accumulation truncates) are added to an fp32 register sum.
constexpr bool kSeparateSum = kPromote > 0 && kTilesK > kPromote; // K is longer than one chunk

// Adds a finished tensor-core chunk to the fp32 sum and starts the next chunk from zero.
__device__ __forceinline__ void promote(float (&sum)[kFragsM][kFragsN][4], float (&acc)[kFragsM][kFragsN][4])
{
#pragma unroll
    for (int i = 0; i < kFragsM; ++i)
#pragma unroll
        for (int j = 0; j < kFragsN; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                sum[i][j][r] += acc[i][j][r];
                acc[i][j][r] = 0.f;
            }
}

// ---- the kernel ----
extern "C" __global__ void __launch_bounds__(kThreads, kMinBlocks)
{{KERNEL}}(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C{{EPILOGUE_PARAMS}})
{
    extern __shared__ __align__(128) float smem[];

{{>mma_gemm_block}}

    float acc[kFragsM][kFragsN][4] = {};
    float sum[kFragsM][kFragsN][4] = {}; // used only with a separate sum; otherwise optimised away

    // Pipeline: kStages-1 tiles in flight while one is multiplied.
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
        if (s < kTilesK) {
            load_tile_a(smem + s * kStageFloats, A, m0, s * kBK);
            load_tile_b(smem + s * kStageFloats + kStageA, B, n0, s * kBK);
        }
        cp_async_commit();
    }
    for (int kt = 0; kt < kTilesK; ++kt) {
        cp_async_wait<kStages - 2>(); // tile kt has landed
        __syncthreads();              // ...for every thread, and the stage read last step is free
        const int next = kt + kStages - 1;
        if (next < kTilesK) {
            float *stage = smem + (next % kStages) * kStageFloats;
            load_tile_a(stage, A, m0, next * kBK);
            load_tile_b(stage + kStageA, B, n0, next * kBK);
        }
        cp_async_commit();
        const float *stage = smem + (kt % kStages) * kStageFloats;
        mma_stage(acc, stage, stage + kStageA, warpRow, warpCol, lane);
        if constexpr (kSeparateSum)
            if ((kt + 1) % kPromote == 0 || kt + 1 == kTilesK) promote(sum, acc);
    }
    cp_async_wait<0>();
    if constexpr (kSeparateSum) promote(acc, sum); // the total, back where the epilogue reads it

{{>mma_gemm_store}}
}
