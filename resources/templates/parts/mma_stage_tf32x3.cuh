// mma_stage for the mma.sync templates (GEMM and convolution) in 3xTF32: fp32 accuracy.
// ---- the 3xTF32 product ----
// x = hi + lo, both TF32.
__device__ __forceinline__ void split_tf32(unsigned x, unsigned &hi, unsigned &lo)
{
    const float f = __uint_as_float(x);
    hi = to_tf32(f);
    lo = to_tf32(f - __uint_as_float(hi));
}

// One BK-deep slice of the warp tile: per 8-deep step, split the fragments and run three MMAs each.
// The steps are not unrolled: one step's fragments (raw, hi and lo) stay live instead of the whole
// slice's, and the other warps on the scheduler cover the shared-load latency at each step.
__device__ __forceinline__ void mma_stage(float (&acc)[kFragsM][kFragsN][4], const float *sA, const float *sB,
                                          int warpRow, int warpCol, int lane)
{
#pragma unroll 1
    for (int kk = 0; kk < kBK; kk += kMmaK) {
        unsigned aHi[kFragsM][4], aLo[kFragsM][4], bHi[kFragsN][2], bLo[kFragsN][2];
#pragma unroll
        for (int i = 0; i < kFragsM; ++i) {
            unsigned a[4];
            load_frag_a(a, sA, warpRow + i * kMmaM, kk, lane);
#pragma unroll
            for (int r = 0; r < 4; ++r) split_tf32(a[r], aHi[i][r], aLo[i][r]);
        }
#pragma unroll
        for (int j = 0; j < kFragsN; j += 2) {
            unsigned b[2][2];
            load_frag_b2(b, sB, warpCol + j * kMmaN, kk, lane);
#pragma unroll
            for (int jj = 0; jj < 2; ++jj)
#pragma unroll
                for (int r = 0; r < 2; ++r) split_tf32(b[jj][r], bHi[j + jj][r], bLo[j + jj][r]);
        }
        // Small terms first, so they are not lost against the large running sum.
#pragma unroll
        for (int i = 0; i < kFragsM; ++i)
#pragma unroll
            for (int j = 0; j < kFragsN; ++j) {
                mma_tf32(acc[i][j], aLo[i], bHi[j]);
                mma_tf32(acc[i][j], aHi[i], bLo[j]);
                mma_tf32(acc[i][j], aHi[i], bHi[j]);
            }
    }
}
