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

// ---- problem sizes and tile shapes ----
constexpr int kM = {{M}}, kN = {{N}}, kK = {{K}};
constexpr long long kBatchStrideA = {{A_BATCH_STRIDE}};  // elements between batches (0: shared)
constexpr long long kBatchStrideB = {{B_BATCH_STRIDE}};
constexpr long long kBatchStrideC = {{C_BATCH_STRIDE}};
constexpr bool kTransB = {{TRANS_B}};                    // B stored [N, K] (a linear layer's weight)

constexpr int kBM = {{BM}}, kBN = {{BN}}, kBK = {{BK}};  // block tile
constexpr int kWM = {{WM}}, kWN = {{WN}};                // warp tile
constexpr int kGroupM = {{GROUP_M}};
constexpr int kMinBlocks = {{MIN_BLOCKS}};

constexpr int kWarpsM = kBM / kWM, kWarpsN = kBN / kWN;
constexpr int kThreads = kWarpsM * kWarpsN * 32;
constexpr int kMmaM = 16, kMmaN = 8, kMmaK = 16;          // mma.m16n8k16 (fp16)
constexpr int kFragsM = kWM / kMmaM, kFragsN = kWN / kMmaN;

// Shared memory (halves): per stage an A tile [BM][BK+8] and a B tile, [BK][BN+8] or [BN][BK+8].
constexpr int kLdA = kBK + 8;
constexpr int kLdB = kTransB ? kBK + 8 : kBN + 8;
constexpr int kStageA = kBM * kLdA;
constexpr int kStageB = kBK * kBN + 8 * kBK + 8 * kBN;    // room for either B layout (matches @launch)
constexpr int kStageHalves = kStageA + kStageB;

__host__ __device__ constexpr int cdiv(int a, int b) { return (a + b - 1) / b; }
constexpr int kTilesM = cdiv(kM, kBM), kTilesN = cdiv(kN, kBN), kTilesK = cdiv(kK, kBK);

// 16-byte loads when every row starts on a 16-byte boundary, else single floats.
constexpr int kVecA = (kK % 4 == 0 && kBatchStrideA % 4 == 0) ? 4 : 1;
constexpr int kVecB = ((kTransB ? kK : kN) % 4 == 0 && kBatchStrideB % 4 == 0) ? 4 : 1;
constexpr int kLoadsA = kBM * kBK / kVecA / kThreads;     // per thread and tile
constexpr int kLoadsB = kBN * kBK / kVecB / kThreads;

static_assert(kBM % kWM == 0 && kBN % kWN == 0, "the warp tile must divide the block tile");
static_assert(kWM % kMmaM == 0 && kWN % 16 == 0, "warp tile: WM a multiple of 16, WN of 16");
static_assert(kBK % kMmaK == 0, "BK must be a multiple of 16");
static_assert(kLoadsA * kVecA * kThreads == kBM * kBK, "A tile loads must spread evenly over the threads");
static_assert(kLoadsB * kVecB * kThreads == kBN * kBK, "B tile loads must spread evenly over the threads");

// ---- global -> registers -> shared (fp32 -> fp16) ----
// A tile element (row, col) of load i: rows of BK/kVec chunks.
struct TileRegs {
    float a[kLoadsA][kVecA];
    float b[kLoadsB][kVecB];
};

template <int kVec>
__device__ __forceinline__ void load_vec(float (&v)[kVec], const float *src, bool inside)
{
    if constexpr (kVec == 4) {
        const float4 x = inside ? __ldg(reinterpret_cast<const float4 *>(src)) : make_float4(0.f, 0.f, 0.f, 0.f);
        v[0] = x.x; v[1] = x.y; v[2] = x.z; v[3] = x.w;
    } else {
        v[0] = inside ? __ldg(src) : 0.f;
    }
}

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

__device__ __forceinline__ void load_tile(TileRegs &r, const float *A, const float *B, int m0, int n0, int k0)
{
#pragma unroll
    for (int i = 0; i < kLoadsA; ++i) {
        constexpr int kPerRow = kBK / kVecA;
        const int c = threadIdx.x + i * kThreads;
        const int gm = m0 + c / kPerRow, gk = k0 + (c % kPerRow) * kVecA;
        const bool inside = gm < kM && gk < kK;
        load_vec<kVecA>(r.a[i], A + (inside ? (long long)gm * kK + gk : 0), inside);
    }
#pragma unroll
    for (int i = 0; i < kLoadsB; ++i) {
        const int c = threadIdx.x + i * kThreads;
        if constexpr (kTransB) {
            constexpr int kPerRow = kBK / kVecB;
            const int gn = n0 + c / kPerRow, gk = k0 + (c % kPerRow) * kVecB;
            const bool inside = gn < kN && gk < kK;
            load_vec<kVecB>(r.b[i], B + (inside ? (long long)gn * kK + gk : 0), inside);
        } else {
            constexpr int kPerRow = kBN / kVecB;
            const int gk = k0 + c / kPerRow, gn = n0 + (c % kPerRow) * kVecB;
            const bool inside = gk < kK && gn < kN;
            load_vec<kVecB>(r.b[i], B + (inside ? (long long)gk * kN + gn : 0), inside);
        }
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

    // Block -> output tile, kGroupM block-rows at a time so that they share B panels in L2.
    const int tile = blockIdx.x;
    const int group = tile / (kGroupM * kTilesN);
    const int firstM = group * kGroupM;
    const int groupRows = min(kTilesM - firstM, kGroupM);
    const int tileM = firstM + (tile % (kGroupM * kTilesN)) % groupRows;
    const int tileN = (tile % (kGroupM * kTilesN)) / groupRows;
    const int m0 = tileM * kBM, n0 = tileN * kBN;
    const int batch = blockIdx.z;
    A += batch * kBatchStrideA;
    B += batch * kBatchStrideB;
    C += batch * kBatchStrideC;

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int warpRow = (warp % kWarpsM) * kWM, warpCol = (warp / kWarpsM) * kWN;

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

    // Epilogue: a function of acc, row, col and batch. Accumulator (i, j, r) sits at row
    // g (+8 for r >= 2) and column 2t (+1 for odd r) of its 16x8 tile.
    const auto epilogue = [&](float acc, int row, int col) -> float { return {{EPILOGUE}}; };
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < kFragsM; ++i)
#pragma unroll
        for (int j = 0; j < kFragsN; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = m0 + warpRow + i * kMmaM + g + 8 * h;
                const int col = n0 + warpCol + j * kMmaN + 2 * t;
                if (row >= kM || col >= kN) continue;
                float *dst = C + (long long)row * kN + col;
                const float v0 = epilogue(acc[i][j][2 * h], row, col);
                if (col + 1 >= kN) {
                    dst[0] = v0;
                } else if constexpr (kN % 2 == 0 && kBatchStrideC % 2 == 0) {
                    const float v1 = epilogue(acc[i][j][2 * h + 1], row, col + 1);
                    *reinterpret_cast<float2 *>(dst) = make_float2(v0, v1); // 8-byte aligned: col is even
                } else {
                    dst[0] = v0;
                    dst[1] = epilogue(acc[i][j][2 * h + 1], row, col + 1);
                }
            }
}
