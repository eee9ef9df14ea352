// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// GEMM on FP16 tensor cores with fp32 accumulation (loose tolerance).
//   out[b] = epilogue(A[b] · B[b]),  A [{{M}} x {{K}}],  B [{{K}} x {{N}}] (stored [{{N}} x {{K}}] when
//   transposed: {{TRANS_B}}),  batch {{BATCH}}.
// Idea: the fp32 inputs are read with 16-byte loads into registers one tile ahead, rounded to
// fp16 (11 significant bits, ~5e-4 relative per operand) while they are stored into shared memory,
// and multiplied by mma.sync.m16n8k16 with fp32 accumulation. Inside the loose tolerance (1e-2),
// not the strict one; values beyond fp16's range (65504) would overflow. (bf16 keeps the range but,
// with 8 significant bits, exceeds 1e-2 on 4096-long zero-mean dot products.)
// Tiles: block {{BM}}x{{BN}}x{{BK}}, warp {{WM}}x{{WN}}, two shared-memory stages (loads for tile
// k+1 are in flight while tile k is multiplied), {{GROUP_M}} block-rows per L2 group, at least
// {{MIN_BLOCKS}} block(s) per SM. Rows are padded by 8 halves so ldmatrix is conflict-free.
// Edge tiles are zero-filled and stores are guarded, so any M, N, K work.
// @problem {{PROBLEM}}
// @precision fp16
// @launch gemm_fp16 grid(cdiv({{M}}, {{BM}}) * cdiv({{N}}, {{BN}}), 1, {{BATCH}}) block(({{BM}} / {{WM}}) * ({{BN}} / {{WN}}) * 32) smem(2 * ({{BM}} * ({{BK}} + 8) + {{BK}} * {{BN}} + 8 * {{BK}} + 8 * {{BN}}) * 2) args({{A}}, {{B}}, {{OUT}}{{EPILOGUE_ARGS}})
#include <cuda_fp16.h>

{{>mma_gemm_sizes}}

constexpr int kMmaK = 16;                                 // mma.m16n8k16 (fp16)

// Shared memory (halves): per stage an A tile [BM][BK+8] and a B tile, [BK][BN+8] or [BN][BK+8].
constexpr int kLdA = kBK + 8;
constexpr int kLdB = kTransB ? kBK + 8 : kBN + 8;
constexpr int kStageA = kBM * kLdA;
constexpr int kStageB = kBK * kBN + 8 * kBK + 8 * kBN;    // room for either B layout (matches @launch)
constexpr int kStageHalves = kStageA + kStageB;

static_assert(kBK % kMmaK == 0, "BK must be a multiple of 16");

// ---- global -> registers -> shared (fp32 -> fp16) ----
{{>gemm_tile_regs}}

template <int kVec>
__device__ __forceinline__ void store_half(__half *dst, const float (&v)[kVec])
{
    if constexpr (kVec == 4) {
        __half2 lo = __floats2half2_rn(v[0], v[1]), hi = __floats2half2_rn(v[2], v[3]);
        uint2 packed;
        packed.x = *reinterpret_cast<unsigned *>(&lo);
        packed.y = *reinterpret_cast<unsigned *>(&hi);
        *reinterpret_cast<uint2 *>(dst) = packed; // 8-byte aligned: rows are multiples of 8 halves
    } else {
        dst[0] = __float2half_rn(v[0]);
    }
}

__device__ __forceinline__ void store_tile(__half *sA, __half *sB, const TileRegs &r)
{
#pragma unroll
    for (int i = 0; i < kLoadsA; ++i) {
        constexpr int kPerRow = kBK / kVecA;
        const int c = threadIdx.x + i * kThreads;
        store_half<kVecA>(sA + (c / kPerRow) * kLdA + (c % kPerRow) * kVecA, r.a[i]);
    }
#pragma unroll
    for (int i = 0; i < kLoadsB; ++i) {
        constexpr int kPerRow = (kTransB ? kBK : kBN) / kVecB;
        const int c = threadIdx.x + i * kThreads;
        store_half<kVecB>(sB + (c / kPerRow) * kLdB + (c % kPerRow) * kVecB, r.b[i]);
    }
}

// ---- fragments and the product ----
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const __half *smem)
{
    const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], const __half *smem)
{
    const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr));
}

__device__ __forceinline__ void mma_fp16(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// A fragment of the 16x16 tile at (row, k): rows g / g+8, columns 2t.. / 2t+8.. (pairs of halves).
__device__ __forceinline__ void load_frag_a(unsigned (&a)[4], const __half *sA, int row, int k, int lane)
{
    ldmatrix_x4(a, sA + (row + (lane & 15)) * kLdA + k + (lane >> 4) * 8);
}

// B fragments of two 8-wide column tiles at (n, k): b[j][0] = B(k+2t.., n+8j+g), b[j][1] = B(k+8+2t.., ..).
__device__ __forceinline__ void load_frag_b2(unsigned (&b)[2][2], const __half *sB, int n, int k, int lane)
{
    unsigned r[4];
    if constexpr (kTransB)
        ldmatrix_x4(r, sB + (n + (lane & 7) + ((lane >> 4) << 3)) * kLdB + k + ((lane >> 3) & 1) * 8);
    else
        ldmatrix_x4_trans(r, sB + (k + (lane & 15)) * kLdB + n + (lane >> 4) * 8);
    b[0][0] = r[0]; b[0][1] = r[1]; b[1][0] = r[2]; b[1][1] = r[3];
}

// One BK-deep slice of the warp tile, one 16-deep step at a time (one step's fragments live).
__device__ __forceinline__ void mma_stage(float (&acc)[kFragsM][kFragsN][4], const __half *sA, const __half *sB,
                                          int warpRow, int warpCol, int lane)
{
#pragma unroll 1
    for (int kk = 0; kk < kBK; kk += kMmaK) {
        unsigned a[kFragsM][4], b[kFragsN][2];
#pragma unroll
        for (int i = 0; i < kFragsM; ++i) load_frag_a(a[i], sA, warpRow + i * kMmaM, kk, lane);
#pragma unroll
        for (int j = 0; j < kFragsN; j += 2) {
            unsigned bb[2][2];
            load_frag_b2(bb, sB, warpCol + j * kMmaN, kk, lane);
            b[j][0] = bb[0][0]; b[j][1] = bb[0][1]; b[j + 1][0] = bb[1][0]; b[j + 1][1] = bb[1][1];
        }
#pragma unroll
        for (int i = 0; i < kFragsM; ++i)
#pragma unroll
            for (int j = 0; j < kFragsN; ++j) mma_fp16(acc[i][j], a[i], b[j]);
    }
}

// ---- the kernel ----
extern "C" __global__ void __launch_bounds__(kThreads, kMinBlocks)
gemm_fp16(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C{{EPILOGUE_PARAMS}})
{
    extern __shared__ __align__(128) __half smem[];

{{>mma_gemm_block}}

    float acc[kFragsM][kFragsN][4] = {};
    TileRegs regs;

    // Two stages: tile kt+1 travels global -> registers while tile kt is multiplied, then is
    // converted and stored into the other stage.
    load_tile(regs, A, B, m0, n0, 0);
    store_tile(smem, smem + kStageA, regs);
    __syncthreads();
    for (int kt = 0; kt < kTilesK; ++kt) {
        const bool more = kt + 1 < kTilesK;
        if (more) load_tile(regs, A, B, m0, n0, (kt + 1) * kBK);
        const __half *stage = smem + (kt & 1) * kStageHalves;
        mma_stage(acc, stage, stage + kStageA, warpRow, warpCol, lane);
        if (more) {
            __half *next = smem + ((kt + 1) & 1) * kStageHalves; // read in step kt-1, before the barrier
            store_tile(next, next + kStageA, regs);
        }
        __syncthreads();
    }

{{>mma_gemm_store}}
}
