// The mma.sync implicit-GEMM convolution templates' common parts (conv_implicit_gemm_tf32,
// _tf32x3 and _pool): sizes and tile shapes, the gather tables, the cp.async tile copies with
// zero-fill, fragment loads and the TF32 MMA instruction.
// ---- problem sizes and tile shapes ----
{{>conv_geometry}}

constexpr int kBM = {{BM}}, kBN = {{BN}}, kBK = {{BK}};  // block tile
constexpr int kWM = {{WM}}, kWN = {{WN}};                // warp tile
constexpr int kStages = {{STAGES}};
constexpr int kMinBlocks = {{MIN_BLOCKS}};

constexpr int kWarpsM = kBM / kWM, kWarpsN = kBN / kWN;
constexpr int kThreads = kWarpsM * kWarpsN * 32;
constexpr int kMmaM = 16, kMmaN = 8, kMmaK = 8;           // mma.m16n8k8 (tf32)
constexpr int kFragsM = kWM / kMmaM, kFragsN = kWN / kMmaN;

__host__ __device__ constexpr int cdiv(int a, int b) { return (a + b - 1) / b; }

// ---- the gather tables: a tap's offset and shifts, an output row's window corner ----
{{>conv_taps}}

// ---- a transposed convolution's phases ----
constexpr bool kTransposed = {{TRANSPOSED}};
{{>conv_phases}}
static_assert(kRowsM == {{ROWS_M}} && kTapsK == {{TAPS_K}}, "the launch's sizes are the template's");

constexpr int kTilesK = cdiv(kTapsK, kBK);
constexpr int kKPadded = kTilesK * kBK;

// Shared memory: the stages (A [BM][BK+4], B [BN][BK+4]), then the tap table and the row table
// (and, transposed, the taps' weight offsets).
constexpr int kLd = kBK + 4;
constexpr int kStageA = kBM * kLd, kStageB = kBN * kLd;
constexpr int kStageFloats = kStageA + kStageB;

// Weight rows start on 16-byte boundaries when Kdim is a multiple of 4: 16-byte copies then.
constexpr int kVecB = (kGemmK % 4 == 0) ? 4 : 1;

static_assert(kBM % kWM == 0 && kBN % kWN == 0, "the warp tile must divide the block tile");
static_assert(kWM % kMmaM == 0 && kWN % 16 == 0, "warp tile: WM a multiple of 16, WN of 16");
static_assert(kBK % kMmaK == 0, "BK must be a multiple of 8");
static_assert(kThreads % kBK == 0 && (kBM * kBK) % kThreads == 0, "the A gather maps threads to taps");
static_assert(kTransposed ? kBN % (kThreads / kBK) == 0
                          : kThreads % (kBK / kVecB) == 0 && kBN % (kThreads / (kBK / kVecB)) == 0,
              "B tile copies must spread evenly over the threads");
static_assert(kStages >= 2, "the pipeline needs at least two stages");
// ---- asynchronous copies (cp.async), zero-filling what lies outside ----
{{>cp_async_zfill}}


// Output row m (of the phase): its corner's offset in x, then the corner (h0, w0, d0).
__device__ __forceinline__ int4 row_entry(int m, const Phase &phase)
{
    int4 e;
    if constexpr (kTransposed)
        phase_pixel_corner(m, phase, e.x, e.w, e.y, e.z);
    else
        pixel_corner(m, e.x, e.w, e.y, e.z);
    return e;
}

// ---- tile copies ----
// A tile [BM][BK+4]: each thread owns one tap column and every (kThreads/BK)-th row.
__device__ __forceinline__ void load_tile_a(float *sA, const float *x, const int2 *taps, const int4 *rows, int k0)
{
    constexpr int kRowStep = kThreads / kBK;
    const int k = threadIdx.x % kBK;
    const int2 tap = taps[k0 + k];
#pragma unroll
    for (int i = 0; i < kBM / kRowStep; ++i) {
        const int row = threadIdx.x / kBK + i * kRowStep;
        const int4 info = rows[row];
        const bool inside = tap_inside(info.w, info.y, info.z, tap.y);
        cp_async<4>(sA + row * kLd + k, inside ? x + info.x + tap.x : x, inside);
    }
}

// B tile [BN][BK+4] from the weight, a [N][Kdim] matrix: each thread copies one column chunk of
// every (kThreads/chunks-per-row)-th row, so its copies differ by a constant offset. Transposed,
// B(n, k) = w[wtaps[k] + n * taps]: one 4-byte copy each, a thread keeping its tap column.
__device__ __forceinline__ void load_tile_b(float *sB, const float *w, const int *wtaps, int n0, int k0)
{
    if constexpr (kTransposed) {
        constexpr int kRowStep = kThreads / kBK;
        const int k = threadIdx.x % kBK, base = wtaps[k0 + k];
#pragma unroll
        for (int i = 0; i < kBN / kRowStep; ++i) {
            const int row = threadIdx.x / kBK + i * kRowStep;
            const bool inside = base >= 0 && n0 + row < kGemmN;
            cp_async<4>(sB + row * kLd + k, inside ? w + base + (long long)(n0 + row) * kKernelTaps : w, inside);
        }
        return;
    }
    constexpr int kPerRow = kBK / kVecB;
    constexpr int kRowStep = kThreads / kPerRow;
    const int row0 = threadIdx.x / kPerRow, col = (threadIdx.x % kPerRow) * kVecB;
    const int gk = k0 + col;
    const float *src = w + (long long)(n0 + row0) * kGemmK + gk;
#pragma unroll
    for (int i = 0; i < kBN / kRowStep; ++i) {
        const int row = row0 + i * kRowStep;
        const bool inside = n0 + row < kGemmN && gk < kGemmK;
        cp_async<kVecB * 4>(sB + row * kLd + col, inside ? src + (long long)i * kRowStep * kGemmK : w, inside);
    }
}

// ---- fragments and the TF32 tensor-core instruction ----
{{>mma_tf32_ops}}

// A fragment of the 16x8 tile at (row, k): a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4).
__device__ __forceinline__ void load_frag_a(unsigned (&a)[4], const float *sA, int row, int k, int lane)
{
    ldmatrix_x4(a, sA + (row + (lane & 15)) * kLd + k + (lane >> 4) * 4);
}

// B fragments of two 8-wide column tiles at (n, k): b[j][0] = B(k+t, n+8j+g), b[j][1] = B(k+t+4, n+8j+g).
__device__ __forceinline__ void load_frag_b2(unsigned (&b)[2][2], const float *sB, int n, int k, int lane)
{
    unsigned r[4];
    ldmatrix_x4(r, sB + (n + (lane & 7) + ((lane >> 4) << 3)) * kLd + k + ((lane >> 3) & 1) * 4);
    b[0][0] = r[0]; b[0][1] = r[1]; b[1][0] = r[2]; b[1][1] = r[3];
}
