// The TF32 mma.sync primitives that the GEMM and convolution tiles (mma_gemm_tiles, conv_mma_tiles)
// build their fragment loads and products from.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const float *smem)
{
    const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

// A plain 4-byte shared load, kept in program order like ldmatrix (so the compiler does not hoist
// a whole stage of loads and run out of registers).
__device__ __forceinline__ unsigned lds32(const float *smem)
{
    unsigned r;
    asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(r) : "r"(static_cast<unsigned>(__cvta_generic_to_shared(smem))));
    return r;
}

__device__ __forceinline__ unsigned to_tf32(float x)
{
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}

__device__ __forceinline__ void mma_tf32(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
