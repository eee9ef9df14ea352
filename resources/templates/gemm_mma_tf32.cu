// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// GEMM on tensor cores in single-pass TF32 (loose tolerance).
//   out[b] = epilogue(A[b] · B[b]),  A [{{M}} x {{K}}],  B [{{K}} x {{N}}] (stored [{{N}} x {{K}}] when
//   transposed: {{TRANS_B}}),  batch {{BATCH}}.
// Idea: each fp32 operand is rounded to TF32 (cvt.rna, 11 significant bits) and multiplied by
// mma.sync.m16n8k8 with fp32 accumulation: about 1e-3 relative error per product, inside the
// loose tolerance (1e-2) but not the strict one.
// Tiles: block {{BM}}x{{BN}}x{{BK}}, warp {{WM}}x{{WN}}, {{STAGES}}-stage cp.async pipeline,
//   {{GROUP_M}} block-rows per L2 group, at least {{MIN_BLOCKS}} block(s) per SM.
// Shared memory rows are padded (A by 4 floats, B by 8 or 4) so fragment loads are conflict-free;
// A (and a transposed B) fragments come from ldmatrix. Edge tiles are zero-filled by cp.async and
// stores are guarded, so any M, N, K work; 16-byte copies need rows that are a multiple of 4 floats.
// @problem {{PROBLEM}}
// @precision tf32
// @launch gemm_tf32 grid(cdiv({{M}}, {{BM}}) * cdiv({{N}}, {{BN}}), 1, {{BATCH}}) block(({{BM}} / {{WM}}) * ({{BN}} / {{WN}}) * 32) smem({{STAGES}} * ({{BM}} * ({{BK}} + 4) + {{BK}} * {{BN}} + 8 * {{BK}} + 4 * {{BN}}) * 4) args({{A}}, {{B}}, {{OUT}}{{EPILOGUE_ARGS}})

{{>mma_gemm_tiles}}

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

// Not promoted: a single TF32 pass's rounding (1e-3) is far above what the accumulation loses.
constexpr int kPromote = 0;

{{>mma_gemm_kernel}}
