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

{{>mma_stage_tf32}}

// Not promoted: a single TF32 pass's rounding (1e-3) is far above what the accumulation loses.
constexpr int kPromote = 0;

{{>mma_gemm_kernel}}
