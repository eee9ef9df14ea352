// d (64 x kBN, fp32) = [d +] A (64 x k) · B (k x kBN), both from shared memory, K-major: one
// wgmma.mma_async per call, k = 8 TF32 (wgmma_tf32) or k = 16 fp16 or bf16 (wgmma_f16, wgmma_bf16) values. Either way a
// call reads 32 bytes of each operand row, so a 128-byte swizzled row holds four calls' worth.
// The accumulator list is part of the instruction, so there is one instruction per tile width.
constexpr int kRowBytes = 128, kCallsPerRow = 4;

{{>wgmma_lists}}

// One call of width N: the accumulators are operands 0 .. N/2 - 1, then descA, descB and scaleD
// (DESC_A, DESC_B, SCALE: their operand numbers as strings).
#define KF_WGMMA_SS_CALL(N, DESC_A, DESC_B, SCALE, SHAPE_TYPES, TRANS)                                  \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " SCALE ", 0;\n"                                   \
                 "wgmma.mma_async.sync.aligned.m64n" #N SHAPE_TYPES " {" KF_REGS_N##N "}, " DESC_A ", "  \
                 DESC_B ", p, 1, 1" TRANS ";\n}\n"                                                     \
                 : KF_ACC_N##N                                                                          \
                 : "l"(descA), "l"(descB), "r"(scaleD))

#define KF_WGMMA_SS(SHAPE_TYPES, TRANS)                                                                \
    if constexpr (kBN == 64)                                                                           \
        KF_WGMMA_SS_CALL(64, "%32", "%33", "%34", SHAPE_TYPES, TRANS);                                 \
    else if constexpr (kBN == 96)                                                                      \
        KF_WGMMA_SS_CALL(96, "%48", "%49", "%50", SHAPE_TYPES, TRANS);                                 \
    else if constexpr (kBN == 128)                                                                     \
        KF_WGMMA_SS_CALL(128, "%64", "%65", "%66", SHAPE_TYPES, TRANS);                                \
    else if constexpr (kBN == 256)                                                                     \
        KF_WGMMA_SS_CALL(256, "%128", "%129", "%130", SHAPE_TYPES, TRANS)

__device__ __forceinline__ void wgmma_tf32(float (&d)[kBN / 2], unsigned long long descA, unsigned long long descB, int scaleD)
{
    KF_WGMMA_SS("k8.f32.tf32.tf32", "");
}
// fp16 takes two more immediates: neither operand transposed (both K-major).
__device__ __forceinline__ void wgmma_f16(float (&d)[kBN / 2], unsigned long long descA, unsigned long long descB, int scaleD)
{
    KF_WGMMA_SS("k16.f32.f16.f16", ", 0, 0");
}
__device__ __forceinline__ void wgmma_bf16(float (&d)[kBN / 2], unsigned long long descA, unsigned long long descB, int scaleD)
{
    KF_WGMMA_SS("k16.f32.bf16.bf16", ", 0, 0");
}
