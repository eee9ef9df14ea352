// d (64 x kBN, fp32) = [d +] A (64 x 16) · B (16 x kBN): A, fp16 or bf16 (T), from registers, B
// from shared memory (K-major). Thread t of the warpgroup holds, packed two to a register (the
// lower k in the low half): a[0] = A(16 * warp + t % 32 / 4, 2 (t % 4) .. +1), a[1] the row 8
// below, a[2] and a[3] the same rows 8 columns right. With T = float the product is TF32, k = 8:
// a[0] = A(16 * warp + t % 32 / 4, t % 4), a[1] the row 8 below, a[2] and a[3] 4 columns right.
{{>wgmma_lists}}

// One call of width N: the accumulators are operands 0 .. N/2 - 1, then the four A registers
// (A_REGS: their operand numbers), descB and scaleD (DESC_B, SCALE). TYPES is the shape and types
// ("k16.f32.f16.f16"); B is not transposed (TRANS ", 0" for 16-bit types; TF32 has no such operand).
#define KF_WGMMA_RS16_CALL(N, TYPES, TRANS, A_REGS, DESC_B, SCALE)                                            \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " SCALE ", 0;\n"                                             \
                 "wgmma.mma_async.sync.aligned.m64n" #N TYPES " {" KF_REGS_N##N "}, {" A_REGS "}, "               \
                 DESC_B ", p, 1, 1" TRANS ";\n}\n"                                                                \
                 : KF_ACC_N##N                                                                                    \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(descB), "r"(scaleD))

#define KF_WGMMA_RS16(TYPES, TRANS)                                                                           \
    if constexpr (kBN == 16)                                                                                  \
        KF_WGMMA_RS16_CALL(16, TYPES, TRANS, "%8, %9, %10, %11", "%12", "%13");                               \
    else if constexpr (kBN == 32)                                                                             \
        KF_WGMMA_RS16_CALL(32, TYPES, TRANS, "%16, %17, %18, %19", "%20", "%21");                             \
    else if constexpr (kBN == 64)                                                                             \
        KF_WGMMA_RS16_CALL(64, TYPES, TRANS, "%32, %33, %34, %35", "%36", "%37");                             \
    else if constexpr (kBN == 96)                                                                             \
        KF_WGMMA_RS16_CALL(96, TYPES, TRANS, "%48, %49, %50, %51", "%52", "%53");                             \
    else if constexpr (kBN == 128)                                                                            \
        KF_WGMMA_RS16_CALL(128, TYPES, TRANS, "%64, %65, %66, %67", "%68", "%69");                            \
    else if constexpr (kBN == 256)                                                                            \
        KF_WGMMA_RS16_CALL(256, TYPES, TRANS, "%128, %129, %130, %131", "%132", "%133")

// T: __half, __nv_bfloat16, or float for TF32 values (each register one value, already rounded).
template <typename T>
__device__ __forceinline__ void wgmma_half_regs(float (&d)[kBN / 2], const unsigned (&a)[4], unsigned long long descB,
                                                int scaleD)
{
    if constexpr (sizeof(T) == 4) {
        KF_WGMMA_RS16("k8.f32.tf32.tf32", "");
    } else if constexpr (kIsFp16<T>) {
        KF_WGMMA_RS16("k16.f32.f16.f16", ", 0");
    } else {
        KF_WGMMA_RS16("k16.f32.bf16.bf16", ", 0");
    }
}

// Two values of an A fragment rounded to T and packed (v0 in the low half); with kLow also what the
// rounding left, rounded again (the lo part of a 3xbf16 split), else lo is 0.
template <typename T, bool kLow>
__device__ __forceinline__ void split_pack(float v0, float v1, unsigned &hi, unsigned &lo)
{
    if constexpr (kIsFp16<T>) {
        const __half2 h = __floats2half2_rn(v0, v1);
        hi = *reinterpret_cast<const unsigned *>(&h);
        lo = 0;
        if constexpr (kLow) {
            const __half2 l = __floats2half2_rn(v0 - __low2float(h), v1 - __high2float(h));
            lo = *reinterpret_cast<const unsigned *>(&l);
        }
    } else {
        const __nv_bfloat162 h = __floats2bfloat162_rn(v0, v1);
        hi = *reinterpret_cast<const unsigned *>(&h);
        lo = 0;
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
