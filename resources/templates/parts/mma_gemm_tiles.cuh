// The mma.sync GEMM templates' common parts (gemm_mma_tf32, gemm_mma_tf32x3): sizes and tile
// shapes, the cp.async tile copies with zero-fill, fragment loads and the TF32 MMA instruction.
// Each template then defines mma_stage (one BK-deep slice of the product) and kPromote before
// including mma_gemm_kernel.
{{>mma_gemm_sizes}}

constexpr int kStages = {{STAGES}};
constexpr int kMmaK = 8;                                  // mma.m16n8k8 (tf32)

// Shared memory: per stage an A tile [BM][BK+4] and a B tile, [BK][BN+8] or, transposed, [BN][BK+4].
constexpr int kLdA = kBK + 4;
constexpr int kLdB = kTransB ? kBK + 4 : kBN + 8;
constexpr int kStageA = kBM * kLdA;
constexpr int kStageB = kBK * kBN + 8 * kBK + 4 * kBN;    // room for either B layout (matches @launch)
constexpr int kStageFloats = kStageA + kStageB;

static_assert(kBK % kMmaK == 0, "BK must be a multiple of 8");
static_assert(kStages >= 2, "the pipeline needs at least two stages");

// ---- asynchronous copies (cp.async), zero-filling what lies outside the matrix ----
{{>cp_async_zfill}}

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

// ---- fragments and the TF32 tensor-core instruction ----
{{>mma_tf32_ops}}

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
