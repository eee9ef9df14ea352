// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// Conv2D as an implicit GEMM on tensor cores in single-pass TF32 (loose tolerance).
//   x [{{BATCH}}, {{IN_C}}, {{IN_H}}, {{IN_W}}] (*) weight [{{OUT_C}}, {{IN_C}}, {{KH}}, {{KW}}], stride {{STRIDE_H}}x{{STRIDE_W}},
//   padding {{PAD_H}}x{{PAD_W}}, dilation {{DIL_H}}x{{DIL_W}} -> out [{{BATCH}}, {{OUT_C}}, {{OUT_H}}, {{OUT_W}}], then the epilogue.
// Idea: GEMM with M = batch*OH*OW output pixels (rows), N = output channels (columns) and
// Kdim = C*KH*KW (c, r, s) taps. The A tile is gathered straight from x by 4-byte cp.async, with
// zero-fill for the padding and for taps past Kdim; the k -> (c, r, s) decomposition is precomputed
// once per block into a shared table (offset into x plus the (r, s) shift), and each output row's
// base offset and window corner into another, so the gather does no division. The weight is
// already a [N][Kdim] matrix. Operands are rounded to TF32 (cvt.rna) and multiplied by
// mma.sync.m16n8k8 with fp32 accumulation: ~1e-3 relative per product, inside the loose tolerance.
// A transposed convolution ({{TRANSPOSED}}) runs as one such GEMM per output phase, gathering its
// weight [in][out][taps] too (parts/conv_phases.cuh).
// Tiles: block {{BM}}x{{BN}}x{{BK}}, warp {{WM}}x{{WN}}, {{STAGES}}-stage cp.async pipeline, at least
// {{MIN_BLOCKS}} block(s) per SM. Edge tiles are predicated, so any sizes work.
// @problem {{PROBLEM}}
// @precision tf32
// @launch conv_tf32 grid(cdiv({{ROWS_M}}, {{BM}}) * {{PHASES}}, cdiv({{OUT_C}}, {{BN}})) block(({{BM}} / {{WM}}) * ({{BN}} / {{WN}}) * 32) smem({{STAGES}} * ({{BM}} + {{BN}}) * ({{BK}} + 4) * 4 + cdiv({{TAPS_K}}, {{BK}}) * {{BK}} * {{TAP_BYTES}} + {{BM}} * 16) args({{X}}, {{WEIGHT}}, {{OUT}}{{EPILOGUE_ARGS}})

{{>conv_mma_tiles}}

{{>mma_stage_tf32}}

{{>conv_mma_kernel}}
