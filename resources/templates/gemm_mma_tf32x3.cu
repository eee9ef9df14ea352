// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// GEMM on tensor cores with fp32 accuracy: 3xTF32 compensated split.
//   out[b] = epilogue(A[b] · B[b]),  A [{{M}} x {{K}}],  B [{{K}} x {{N}}] (stored [{{N}} x {{K}}] when
//   transposed: {{TRANS_B}}),  batch {{BATCH}}.
// Idea: every fp32 operand is split into a TF32 "big" part and a TF32 "small" remainder,
//   a = a_hi + a_lo,  a_hi = cvt.rna.tf32(a),  a_lo = cvt.rna.tf32(a - a_hi),
// and each product is a_hi*b_hi + a_hi*b_lo + a_lo*b_hi (a_lo*b_lo, ~2^-22 relative, is dropped),
// accumulated in fp32 by mma.sync.m16n8k8. That is about 22 bits of each operand: fp32-equivalent
// under the strict tolerance, at three tensor-core passes. The tensor cores' fp32 accumulation
// truncates, and its error grows with the number of steps summed there (measured on an H200 with
// uniform inputs: 1.4e-4 scaled at K = 8192, 1.8e-3 at K = 524288, against 1e-4 for strict), so
// with PROMOTE = {{PROMOTE}} > 0 each PROMOTE K tiles are summed there and the chunk is then added to
// an fp32 register sum, rounded to nearest.
// Tiles: block {{BM}}x{{BN}}x{{BK}}, warp {{WM}}x{{WN}}, {{STAGES}}-stage cp.async pipeline,
//   {{GROUP_M}} block-rows per L2 group, at least {{MIN_BLOCKS}} block(s) per SM.
// Shared memory rows are padded (A by 4 floats, B by 8 or 4) so fragment loads are conflict-free;
// A (and a transposed B) fragments come from ldmatrix. Edge tiles are zero-filled by cp.async and
// stores are guarded, so any M, N, K work; 16-byte copies need rows that are a multiple of 4 floats.
// @problem {{PROBLEM}}
// @precision tf32x3
// @launch gemm_tf32x3 grid(cdiv({{M}}, {{BM}}) * cdiv({{N}}, {{BN}}), 1, {{BATCH}}) block(({{BM}} / {{WM}}) * ({{BN}} / {{WN}}) * 32) smem({{STAGES}} * ({{BM}} * ({{BK}} + 4) + {{BK}} * {{BN}} + 8 * {{BK}} + 4 * {{BN}}) * 4) args({{A}}, {{B}}, {{OUT}}{{EPILOGUE_ARGS}})

{{>mma_gemm_tiles}}

{{>mma_stage_tf32x3}}

constexpr int kPromote = {{PROMOTE}}; // K tiles per tensor-core chunk, 0: all of K

{{>mma_gemm_kernel}}
