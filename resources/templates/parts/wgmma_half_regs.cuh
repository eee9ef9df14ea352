// d (64 x kBN, fp32) = [d +] A (64 x 16) · B (16 x kBN): A, fp16 or bf16 (T), from registers, B
// from shared memory (K-major). Thread t of the warpgroup holds, packed two to a register (the
// lower k in the low half): a[0] = A(16 * warp + t % 32 / 4, 2 (t % 4) .. +1), a[1] the row 8
// below, a[2] and a[3] the same rows 8 columns right.
{{>wgmma_lists}}

// One call of width N: the accumulators are operands 0 .. N/2 - 1, then the four A registers
// (A_REGS: their operand numbers), descB and scaleD (DESC_B, SCALE). B is not transposed.
#define KF_WGMMA_RS16_CALL(N, TYPES, A_REGS, DESC_B, SCALE)                                                   \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " SCALE ", 0;\n"                                             \
                 "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32" TYPES " {" KF_REGS_N##N "}, {" A_REGS "}, "     \
                 DESC_B ", p, 1, 1, 0;\n}\n"                                                                      \
                 : KF_ACC_N##N                                                                                    \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(descB), "r"(scaleD))

#define KF_WGMMA_RS16(TYPES)                                                                                  \
    if constexpr (kBN == 16)                                                                                  \
        KF_WGMMA_RS16_CALL(16, TYPES, "%8, %9, %10, %11", "%12", "%13");                                      \
    else if constexpr (kBN == 32)                                                                             \
        KF_WGMMA_RS16_CALL(32, TYPES, "%16, %17, %18, %19", "%20", "%21");                                    \
    else if constexpr (kBN == 64)                                                                             \
        KF_WGMMA_RS16_CALL(64, TYPES, "%32, %33, %34, %35", "%36", "%37");                                    \
    else if constexpr (kBN == 96)                                                                             \
        KF_WGMMA_RS16_CALL(96, TYPES, "%48, %49, %50, %51", "%52", "%53");                                    \
    else if constexpr (kBN == 128)                                                                            \
        KF_WGMMA_RS16_CALL(128, TYPES, "%64, %65, %66, %67", "%68", "%69");                                   \
    else if constexpr (kBN == 256)                                                                            \
        KF_WGMMA_RS16_CALL(256, TYPES, "%128, %129, %130, %131", "%132", "%133")

template <typename T>
__device__ __forceinline__ void wgmma_half_regs(float (&d)[kBN / 2], const unsigned (&a)[4], unsigned long long descB,
                                                int scaleD)
{
    if constexpr (kIsFp16<T>) {
        KF_WGMMA_RS16(".f16.f16");
    } else {
        KF_WGMMA_RS16(".bf16.bf16");
    }
}

// Two values of an A fragment rounded to T and packed (v0 in the low half); with kLow (bf16 only,
// the 3xbf16 split) lo packs what the rounding left, rounded again, else lo is 0.
template <typename T, bool kLow>
__device__ __forceinline__ void split_pack(float v0, float v1, unsigned &hi, unsigned &lo)
{
    static_assert(!(kLow && kIsFp16<T>), "an fp16 product is a single pass");
    lo = 0;
    if constexpr (kIsFp16<T>) {
        const __half2 h = __floats2half2_rn(v0, v1);
        hi = *reinterpret_cast<const unsigned *>(&h);
    } else {
        const __nv_bfloat162 h = __floats2bfloat162_rn(v0, v1);
        hi = *reinterpret_cast<const unsigned *>(&h);
        if constexpr (kLow) {
            const __nv_bfloat162 l = __floats2bfloat162_rn(v0 - __low2float(h), v1 - __high2float(h));
            lo = *reinterpret_cast<const unsigned *>(&l);
        }
    }
}

// Keeps packed operand registers alive and in place until this point (see fence_operands).
template <int kRegs>
__device__ __forceinline__ void fence_packed(unsigned (&r)[kRegs])
{
#pragma unroll
    for (int i = 0; i < kRegs; ++i) asm volatile("" : "+r"(r[i])::"memory");
}
