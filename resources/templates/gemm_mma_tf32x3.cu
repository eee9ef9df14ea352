// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// GEMM on tensor cores with fp32 accuracy: 3xTF32 compensated split.
//   out[b] = epilogue(A[b] · B[b]),  A [{{M}} x {{K}}],  B [{{K}} x {{N}}] (stored [{{N}} x {{K}}] when
//   transposed: {{TRANS_B}}),  batch {{BATCH}}.
// Idea: every fp32 operand is split into a TF32 "big" part and a TF32 "small" remainder,
//   a = a_hi + a_lo,  a_hi = cvt.rna.tf32(a),  a_lo = cvt.rna.tf32(a - a_hi),
// and each product is a_hi*b_hi + a_hi*b_lo + a_lo*b_hi (a_lo*b_lo, ~2^-22 relative, is dropped),
// accumulated in fp32 by mma.sync.m16n8k8. That is about 22 bits of each operand: fp32-equivalent
// under the strict tolerance, at three tensor-core passes. The tensor cores' fp32 accumulation
// truncates, and its error grows with the number of steps summed there (measured on an H200 with
// uniform inputs: 1.4e-4 scaled at K = 8192, 1.8e-3 at K = 524288, against 1e-4 for strict), so
// with PROMOTE = {{PROMOTE}} > 0 each PROMOTE K tiles are summed there and the chunk is then added to
// an fp32 register sum, rounded to nearest.
// Tiles: block {{BM}}x{{BN}}x{{BK}}, warp {{WM}}x{{WN}}, {{STAGES}}-stage cp.async pipeline,
//   {{GROUP_M}} block-rows per L2 group, at least {{MIN_BLOCKS}} block(s) per SM.
// Shared memory rows are padded (A by 4 floats, B by 8 or 4) so fragment loads are conflict-free;
// A (and a transposed B) fragments come from ldmatrix. Edge tiles are zero-filled by cp.async and
// stores are guarded, so any M, N, K work; 16-byte copies need rows that are a multiple of 4 floats.
// @problem {{PROBLEM}}
// @precision tf32x3
// @launch gemm_tf32x3 grid(cdiv({{M}}, {{BM}}) * cdiv({{N}}, {{BN}}), 1, {{BATCH}}) block(({{BM}} / {{WM}}) * ({{BN}} / {{WN}}) * 32) smem({{STAGES}} * ({{BM}} * ({{BK}} + 4) + {{BK}} * {{BN}} + 8 * {{BK}} + 4 * {{BN}}) * 4) args({{A}}, {{B}}, {{OUT}}{{EPILOGUE_ARGS}})

// ---- problem sizes and tile shapes ----
constexpr int kM = {{M}}, kN = {{N}}, kK = {{K}};
constexpr long long kBatchStrideA = {{A_BATCH_STRIDE}};  // elements between batches (0: shared)
constexpr long long kBatchStrideB = {{B_BATCH_STRIDE}};
constexpr long long kBatchStrideC = {{C_BATCH_STRIDE}};
constexpr bool kTransB = {{TRANS_B}};                    // B stored [N, K] (a linear layer's weight)

constexpr int kBM = {{BM}}, kBN = {{BN}}, kBK = {{BK}};  // block tile
constexpr int kWM = {{WM}}, kWN = {{WN}};                // warp tile
constexpr int kStages = {{STAGES}};
constexpr int kGroupM = {{GROUP_M}};
constexpr int kMinBlocks = {{MIN_BLOCKS}};
constexpr int kPromote = {{PROMOTE}};                    // K tiles per tensor-core chunk, 0: all of K

constexpr int kWarpsM = kBM / kWM, kWarpsN = kBN / kWN;
constexpr int kThreads = kWarpsM * kWarpsN * 32;
constexpr int kMmaM = 16, kMmaN = 8, kMmaK = 8;           // mma.m16n8k8 (tf32)
constexpr int kFragsM = kWM / kMmaM, kFragsN = kWN / kMmaN;

// Shared memory: per stage an A tile [BM][BK+4] and a B tile, [BK][BN+8] or, transposed, [BN][BK+4].
constexpr int kLdA = kBK + 4;
constexpr int kLdB = kTransB ? kBK + 4 : kBN + 8;
constexpr int kStageA = kBM * kLdA;
constexpr int kStageB = kBK * kBN + 8 * kBK + 4 * kBN;    // room for either B layout (matches @launch)
constexpr int kStageFloats = kStageA + kStageB;

__host__ __device__ constexpr int cdiv(int a, int b) { return (a + b - 1) / b; }
constexpr int kTilesM = cdiv(kM, kBM), kTilesN = cdiv(kN, kBN), kTilesK = cdiv(kK, kBK);
constexpr bool kSeparateSum = kPromote > 0 && kTilesK > kPromote; // K is longer than one chunk

// 16-byte copies when every copied row starts on a 16-byte boundary, else 4-byte copies.
constexpr int kVecA = (kK % 4 == 0 && kBatchStrideA % 4 == 0) ? 4 : 1;
constexpr int kVecB = ((kTransB ? kK : kN) % 4 == 0 && kBatchStrideB % 4 == 0) ? 4 : 1;

static_assert(kBM % kWM == 0 && kBN % kWN == 0, "the warp tile must divide the block tile");
static_assert(kWM % kMmaM == 0 && kWN % 16 == 0, "warp tile: WM a multiple of 16, WN of 16");
static_assert(kBK % kMmaK == 0, "BK must be a multiple of 8");
static_assert(kStages >= 2, "the pipeline needs at least two stages");

// ---- asynchronous copies (cp.async), zero-filling what lies outside the matrix ----
template <int kBytes>
__device__ __forceinline__ void cp_async(float *smem, const float *gmem, bool inside)
{
    const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    const int srcBytes = inside ? kBytes : 0; // 0: nothing is read, the destination is zero-filled
    if constexpr (kBytes == 16)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem), "r"(srcBytes));
    else
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(gmem), "r"(srcBytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int kPending>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending)); }

// Copies a tile of kRows rows and kCols columns starting at src (row stride ld) into shared
// memory (row stride kLdS), in chunks of kVec floats. Each thread copies one column chunk of every
// (kThreads/chunks-per-row)-th row, so its copies differ by constant offsets. Rows from rowsLeft
// and columns from colsLeft on lie outside the matrix: they are zero-filled.
template <int kRows, int kCols, int kVec, int kLdS>
__device__ __forceinline__ void load_tile(float *dst, const float *src, long long ld, int rowsLeft, int colsLeft)
{
    constexpr int kPerRow = kCols / kVec;
    constexpr int kRowStep = kThreads / kPerRow;
    static_assert(kThreads % kPerRow == 0 && kRows % kRowStep == 0, "tile copies must spread evenly over the threads");
    const int row0 = threadIdx.x / kPerRow, col = (threadIdx.x % kPerRow) * kVec;
    const float *from = src + row0 * ld + col;
#pragma unroll
    for (int i = 0; i < kRows / kRowStep; ++i) {
        const int row = row0 + i * kRowStep;
        const bool inside = row < rowsLeft && col < colsLeft;
        cp_async<kVec * 4>(dst + row * kLdS + col, inside ? from + i * kRowStep * ld : src, inside);
    }
}

// The A tile (rows m0.., columns k0..): [BM][BK+4].
__device__ __forceinline__ void load_tile_a(float *sA, const float *A, int m0, int k0)
{
    load_tile<kBM, kBK, kVecA, kLdA>(sA, A + (long long)m0 * kK + k0, kK, kM - m0, kK - k0);
}

// The B tile (k0.., n0..): [BK][BN+8], or [BN][BK+4] when B is stored [N, K].
__device__ __forceinline__ void load_tile_b(float *sB, const float *B, int n0, int k0)
{
    if constexpr (kTransB)
        load_tile<kBN, kBK, kVecB, kLdB>(sB, B + (long long)n0 * kK + k0, kK, kN - n0, kK - k0);
    else
        load_tile<kBK, kBN, kVecB, kLdB>(sB, B + (long long)k0 * kN + n0, kN, kK - k0, kN - n0);
}

// ---- fragments and the 3xTF32 product ----
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

// x = hi + lo, both TF32.
__device__ __forceinline__ void split_tf32(unsigned x, unsigned &hi, unsigned &lo)
{
    const float f = __uint_as_float(x);
    hi = to_tf32(f);
    lo = to_tf32(f - __uint_as_float(hi));
}

__device__ __forceinline__ void mma_tf32(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// A fragment of the 16x8 tile at (row, k) of a stage: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4).
__device__ __forceinline__ void load_frag_a(unsigned (&a)[4], const float *sA, int row, int k, int lane)
{
    ldmatrix_x4(a, sA + (row + (lane & 15)) * kLdA + k + (lane >> 4) * 4);
}

// B fragments of two 8-wide column tiles at (n, k): b[j][0] = B(k+t, n+8j+g), b[j][1] = B(k+t+4, n+8j+g).
__device__ __forceinline__ void load_frag_b2(unsigned (&b)[2][2], const float *sB, int n, int k, int lane)
{
    if constexpr (kTransB) {
        unsigned r[4];
        ldmatrix_x4(r, sB + (n + (lane & 7) + ((lane >> 4) << 3)) * kLdB + k + ((lane >> 3) & 1) * 4);
        b[0][0] = r[0]; b[0][1] = r[1]; b[1][0] = r[2]; b[1][1] = r[3];
    } else {
        const int g = lane >> 2, t = lane & 3;
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            b[j][0] = lds32(sB + (k + t) * kLdB + n + 8 * j + g);
            b[j][1] = lds32(sB + (k + t + 4) * kLdB + n + 8 * j + g);
        }
    }
}

// One BK-deep slice of the warp tile: per 8-deep step, split the fragments and run three MMAs each.
// The steps are not unrolled: one step's fragments (raw, hi and lo) stay live instead of the whole
// slice's, and the other warps on the scheduler cover the shared-load latency at each step.
__device__ __forceinline__ void mma_stage(float (&acc)[kFragsM][kFragsN][4], const float *sA, const float *sB,
                                          int warpRow, int warpCol, int lane)
{
#pragma unroll 1
    for (int kk = 0; kk < kBK; kk += kMmaK) {
        unsigned aHi[kFragsM][4], aLo[kFragsM][4], bHi[kFragsN][2], bLo[kFragsN][2];
#pragma unroll
        for (int i = 0; i < kFragsM; ++i) {
            unsigned a[4];
            load_frag_a(a, sA, warpRow + i * kMmaM, kk, lane);
#pragma unroll
            for (int r = 0; r < 4; ++r) split_tf32(a[r], aHi[i][r], aLo[i][r]);
        }
#pragma unroll
        for (int j = 0; j < kFragsN; j += 2) {
            unsigned b[2][2];
            load_frag_b2(b, sB, warpCol + j * kMmaN, kk, lane);
#pragma unroll
            for (int jj = 0; jj < 2; ++jj)
#pragma unroll
                for (int r = 0; r < 2; ++r) split_tf32(b[jj][r], bHi[j + jj][r], bLo[j + jj][r]);
        }
        // Small terms first, so they are not lost against the large running sum.
#pragma unroll
        for (int i = 0; i < kFragsM; ++i)
#pragma unroll
            for (int j = 0; j < kFragsN; ++j) {
                mma_tf32(acc[i][j], aLo[i], bHi[j]);
                mma_tf32(acc[i][j], aHi[i], bLo[j]);
                mma_tf32(acc[i][j], aHi[i], bHi[j]);
            }
    }
}

// Adds a finished tensor-core chunk to the fp32 sum and starts the next chunk from zero.
__device__ __forceinline__ void promote(float (&sum)[kFragsM][kFragsN][4], float (&acc)[kFragsM][kFragsN][4])
{
#pragma unroll
    for (int i = 0; i < kFragsM; ++i)
#pragma unroll
        for (int j = 0; j < kFragsN; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                sum[i][j][r] += acc[i][j][r];
                acc[i][j][r] = 0.f;
            }
}

// ---- the kernel ----
extern "C" __global__ void __launch_bounds__(kThreads, kMinBlocks)
gemm_tf32x3(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C{{EPILOGUE_PARAMS}})
{
    extern __shared__ __align__(128) float smem[];

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
    float sum[kFragsM][kFragsN][4] = {}; // used only with a separate sum; otherwise optimised away

    // Pipeline: kStages-1 tiles in flight while one is multiplied.
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
        if (s < kTilesK) {
            load_tile_a(smem + s * kStageFloats, A, m0, s * kBK);
            load_tile_b(smem + s * kStageFloats + kStageA, B, n0, s * kBK);
        }
        cp_async_commit();
    }
    for (int kt = 0; kt < kTilesK; ++kt) {
        cp_async_wait<kStages - 2>(); // tile kt has landed
        __syncthreads();              // ...for every thread, and the stage read last step is free
        const int next = kt + kStages - 1;
        if (next < kTilesK) {
            float *stage = smem + (next % kStages) * kStageFloats;
            load_tile_a(stage, A, m0, next * kBK);
            load_tile_b(stage + kStageA, B, n0, next * kBK);
        }
        cp_async_commit();
        const float *stage = smem + (kt % kStages) * kStageFloats;
        mma_stage(acc, stage, stage + kStageA, warpRow, warpCol, lane);
        if constexpr (kSeparateSum)
            if ((kt + 1) % kPromote == 0 || kt + 1 == kTilesK) promote(sum, acc);
    }
    cp_async_wait<0>();
    if constexpr (kSeparateSum) promote(acc, sum); // the total, back where the epilogue reads it

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
