// mma_stage for the mma.sync templates (GEMM and convolution) in single-pass TF32 (loose).
// ---- the TF32 product ----
// One BK-deep slice of the warp tile: per 8-deep step, round the fragments to TF32 and multiply.
// The steps are not unrolled, so only one step's fragments are live (a whole slice's spills).
__device__ __forceinline__ void mma_stage(float (&acc)[kFragsM][kFragsN][4], const float *sA, const float *sB,
                                          int warpRow, int warpCol, int lane)
{
#pragma unroll 1
    for (int kk = 0; kk < kBK; kk += kMmaK) {
        unsigned a[kFragsM][4], b[kFragsN][2];
#pragma unroll
        for (int i = 0; i < kFragsM; ++i) {
            load_frag_a(a[i], sA, warpRow + i * kMmaM, kk, lane);
#pragma unroll
            for (int r = 0; r < 4; ++r) a[i][r] = to_tf32(__uint_as_float(a[i][r]));
        }
#pragma unroll
        for (int j = 0; j < kFragsN; j += 2) {
            unsigned bb[2][2];
            load_frag_b2(bb, sB, warpCol + j * kMmaN, kk, lane);
#pragma unroll
            for (int jj = 0; jj < 2; ++jj)
#pragma unroll
                for (int r = 0; r < 2; ++r) b[j + jj][r] = to_tf32(__uint_as_float(bb[jj][r]));
        }
#pragma unroll
        for (int i = 0; i < kFragsM; ++i)
#pragma unroll
            for (int j = 0; j < kFragsN; ++j) mma_tf32(acc[i][j], a[i], b[j]);
    }
}
