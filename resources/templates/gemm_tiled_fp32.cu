// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// GEMM in plain fp32 on the CUDA cores: shared-memory tiles and register tiling.
//   out[b] = epilogue(A[b] · B[b]),  A [{{M}} x {{K}}] (stored [{{K}} x {{M}}] when transposed: {{TRANS_A}}),
//   B [{{K}} x {{N}}] (stored [{{N}} x {{K}}] when transposed: {{TRANS_B}}),  batch {{BATCH}}.
// Idea: each block computes a {{BM}}x{{BN}} tile; each thread a {{TM}}x{{TN}} register tile, as 4x4
// sub-tiles spread across the block tile so that its 16-byte shared reads are conflict-free. Tiles
// {{BK}} deep are read with 16-byte loads one step ahead into registers and stored into the other
// of two shared stages (A and a transposed B are stored k-major), so one barrier per step suffices.
// Every product is an fp32 FFMA: strict accuracy, at the CUDA cores' fp32 rate.
// Edge tiles are zero-filled and stores are guarded, so any M, N, K work.
// @problem {{PROBLEM}}
// @precision fp32
// @launch gemm_fp32 grid(cdiv({{N}}, {{BN}}), cdiv({{M}}, {{BM}}), {{BATCH}}) block(({{BM}} / {{TM}}) * ({{BN}} / {{TN}})) args({{A}}, {{B}}, {{OUT}}{{EPILOGUE_ARGS}})

// ---- problem sizes and tile shapes ----
constexpr int kM = {{M}}, kN = {{N}}, kK = {{K}};
constexpr long long kBatchStrideA = {{A_BATCH_STRIDE}};  // elements between batches (0: shared)
constexpr long long kBatchStrideB = {{B_BATCH_STRIDE}};
constexpr long long kBatchStrideC = {{C_BATCH_STRIDE}};
constexpr bool kTransA = {{TRANS_A}};                    // A stored [K, M] (a transposed view)
constexpr bool kTransB = {{TRANS_B}};                    // B stored [N, K] (a linear layer's weight)

constexpr int kBM = {{BM}}, kBN = {{BN}}, kBK = {{BK}};  // block tile
constexpr int kTM = {{TM}}, kTN = {{TN}};                // thread tile
constexpr int kThreadsM = kBM / kTM, kThreadsN = kBN / kTN;
constexpr int kThreads = kThreadsM * kThreadsN;
constexpr int kGroupsM = kTM / 4, kGroupsN = kTN / 4;    // 4x4 sub-tiles per thread
constexpr int kGroupStrideM = kThreadsM * 4, kGroupStrideN = kThreadsN * 4;

// Shared memory: two stages of A [BK][BM+4] and B [BK][BN+4], both k-major.
constexpr int kLdA = kBM + 4, kLdB = kBN + 4;

__host__ __device__ constexpr int cdiv(int a, int b) { return (a + b - 1) / b; }
constexpr int kTilesK = cdiv(kK, kBK);

// 16-byte loads when every row starts on a 16-byte boundary, else single floats.
constexpr int kVecA = ((kTransA ? kM : kK) % 4 == 0 && kBatchStrideA % 4 == 0) ? 4 : 1;
constexpr int kVecB = ((kTransB ? kK : kN) % 4 == 0 && kBatchStrideB % 4 == 0) ? 4 : 1;

static_assert(kTM % 4 == 0 && kTN % 4 == 0, "thread tiles are made of 4x4 sub-tiles");
static_assert(kBM % kTM == 0 && kBN % kTN == 0, "the thread tile must divide the block tile");
static_assert(kBK % 4 == 0, "BK must be a multiple of 4");
static_assert(2 * kBK * (kLdA + kLdB) * 4 <= 48 * 1024, "static shared memory is limited to 48 KB");

// ---- global -> registers -> shared ----
{{>gemm_tile_regs}}

// Chunk c of a tile into a k-major shared tile s (row stride ld). kAlongK: the chunk runs along k
// (an operand stored [rows, K]), so its values go down one column of s; else it runs along the
// rows (an operand stored [K, rows]) and is one contiguous store.
template <int kVec, int kCols, bool kAlongK>
__device__ __forceinline__ void store_chunk(float *s, int ld, const float (&v)[kVec], int c)
{
    constexpr int kPerRow = kCols / kVec;
    const int outer = c / kPerRow, inner = (c % kPerRow) * kVec;
    if constexpr (kAlongK) {
#pragma unroll
        for (int q = 0; q < kVec; ++q) s[(inner + q) * ld + outer] = v[q];
    } else if constexpr (kVec == 4) {
        *reinterpret_cast<float4 *>(s + outer * ld + inner) = make_float4(v[0], v[1], v[2], v[3]);
    } else {
        s[outer * ld + inner] = v[0];
    }
}

// Both tiles are stored k-major: element (row, k) of A's goes to sA[k][row], (k, n) of B's to sB[k][n].
__device__ __forceinline__ void store_tile(float *sA, float *sB, const TileRegs &r)
{
#pragma unroll
    for (int i = 0; i < kLoadsA; ++i) {
        const int c = threadIdx.x + i * kThreads;
        if constexpr (kTransA)
            store_chunk<kVecA, kBM, false>(sA, kLdA, r.a[i], c);
        else
            store_chunk<kVecA, kBK, true>(sA, kLdA, r.a[i], c);
    }
#pragma unroll
    for (int i = 0; i < kLoadsB; ++i) {
        const int c = threadIdx.x + i * kThreads;
        if constexpr (kTransB)
            store_chunk<kVecB, kBK, true>(sB, kLdB, r.b[i], c);
        else
            store_chunk<kVecB, kBN, false>(sB, kLdB, r.b[i], c);
    }
}

// ---- the register-tile product ----
// One BK-deep slice: per k, TM values of A and TN of B (16-byte shared reads), TM*TN FFMAs.
__device__ __forceinline__ void fma_stage(float (&acc)[kTM][kTN], const float *sA, const float *sB, int tx, int ty)
{
#pragma unroll
    for (int k = 0; k < kBK; ++k) {
        float a[kTM], b[kTN];
#pragma unroll
        for (int i = 0; i < kGroupsM; ++i) {
            const float4 v = *reinterpret_cast<const float4 *>(sA + k * kLdA + i * kGroupStrideM + ty * 4);
            a[4 * i] = v.x; a[4 * i + 1] = v.y; a[4 * i + 2] = v.z; a[4 * i + 3] = v.w;
        }
#pragma unroll
        for (int j = 0; j < kGroupsN; ++j) {
            const float4 v = *reinterpret_cast<const float4 *>(sB + k * kLdB + j * kGroupStrideN + tx * 4);
            b[4 * j] = v.x; b[4 * j + 1] = v.y; b[4 * j + 2] = v.z; b[4 * j + 3] = v.w;
        }
#pragma unroll
        for (int i = 0; i < kTM; ++i)
#pragma unroll
            for (int j = 0; j < kTN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
}

// ---- the kernel ----
extern "C" __global__ void __launch_bounds__(kThreads)
gemm_fp32(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C{{EPILOGUE_PARAMS}})
{
    __shared__ __align__(16) float sA[2][kBK * kLdA];
    __shared__ __align__(16) float sB[2][kBK * kLdB];

    const int m0 = blockIdx.y * kBM, n0 = blockIdx.x * kBN;
    const int batch = blockIdx.z;
    A += batch * kBatchStrideA;
    B += batch * kBatchStrideB;
    C += batch * kBatchStrideC;
    const int tx = threadIdx.x % kThreadsN, ty = threadIdx.x / kThreadsN;

    float acc[kTM][kTN] = {};
    TileRegs regs;

    load_tile(regs, A, B, m0, n0, 0);
    store_tile(sA[0], sB[0], regs);
    __syncthreads();
    for (int kt = 0; kt < kTilesK; ++kt) {
        const bool more = kt + 1 < kTilesK;
        if (more) load_tile(regs, A, B, m0, n0, (kt + 1) * kBK); // in flight during the FFMAs
        fma_stage(acc, sA[kt & 1], sB[kt & 1], tx, ty);
        if (more) store_tile(sA[(kt + 1) & 1], sB[(kt + 1) & 1], regs); // read in step kt-1, before the barrier
        __syncthreads();
    }

    // Epilogue: a function of acc, row, col and batch; 16-byte stores where the row allows.
    const auto epilogue = [&](float acc, int row, int col) -> float { return {{EPILOGUE}}; };
#pragma unroll
    for (int i = 0; i < kTM; ++i) {
        const int row = m0 + (i / 4) * kGroupStrideM + ty * 4 + i % 4;
        if (row >= kM) continue;
#pragma unroll
        for (int j = 0; j < kGroupsN; ++j) {
            const int col = n0 + j * kGroupStrideN + tx * 4;
            float *dst = C + (long long)row * kN + col;
            if (kN % 4 == 0 && kBatchStrideC % 4 == 0 && col + 3 < kN) {
                float4 v;
                v.x = epilogue(acc[i][4 * j], row, col);
                v.y = epilogue(acc[i][4 * j + 1], row, col + 1);
                v.z = epilogue(acc[i][4 * j + 2], row, col + 2);
                v.w = epilogue(acc[i][4 * j + 3], row, col + 3);
                *reinterpret_cast<float4 *>(dst) = v;
            } else {
#pragma unroll
                for (int q = 0; q < 4; ++q)
                    if (col + q < kN) dst[q] = epilogue(acc[i][4 * j + q], row, col + q);
            }
        }
    }
}
