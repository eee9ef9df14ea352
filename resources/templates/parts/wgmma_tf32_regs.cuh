// d (64 x kN, fp32) = [d +] A (64 x 8) · B (8 x kN): A, TF32, from registers, B from shared memory.
// Thread t of the warpgroup holds a[0] = A(16 * warp + t % 32 / 4, t % 4), a[1] the row 8 below,
// a[2] and a[3] the same rows 4 columns right.
{{>wgmma_lists}}

// One call of width N: the accumulators are operands 0 .. N/2 - 1, then the four A registers
// (A_REGS: their operand numbers), descB and scaleD (DESC_B, SCALE).
#define KF_WGMMA_RS_CALL(N, A_REGS, DESC_B, SCALE)                                                        \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " SCALE ", 0;\n"                                       \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k8.f32.tf32.tf32 {" KF_REGS_N##N "}, {" A_REGS "}, " \
                 DESC_B ", p, 1, 1;\n}\n"                                                                   \
                 : KF_ACC_N##N                                                                              \
                 : "r"(__float_as_uint(a[0])), "r"(__float_as_uint(a[1])), "r"(__float_as_uint(a[2])),      \
                   "r"(__float_as_uint(a[3])), "l"(descB), "r"(scaleD))

__device__ __forceinline__ void wgmma_tf32_regs(float (&d)[kBN / 2], const float (&a)[4], unsigned long long descB, int scaleD)
{
    if constexpr (kBN == 16)
        KF_WGMMA_RS_CALL(16, "%8, %9, %10, %11", "%12", "%13");
    else if constexpr (kBN == 32)
        KF_WGMMA_RS_CALL(32, "%16, %17, %18, %19", "%20", "%21");
    else if constexpr (kBN == 64)
        KF_WGMMA_RS_CALL(64, "%32, %33, %34, %35", "%36", "%37");
    else if constexpr (kBN == 96)
        KF_WGMMA_RS_CALL(96, "%48, %49, %50, %51", "%52", "%53");
    else if constexpr (kBN == 128)
        KF_WGMMA_RS_CALL(128, "%64, %65, %66, %67", "%68", "%69");
}
