// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// A few rows too long for one block, each read once: the whole GPU holds one row at a time in
// registers. kGrid blocks (as many as the SMs run at once) each own a chunk of every row; for row r
// a block loads its chunk (kElems values per thread), takes the chunk's exact two-pass statistics
// from registers (count, mean, sum of squared deviations, in double), publishes them and waits at
// a barrier of all blocks (an atomic count per row). Every block then merges the kGrid partials
// with Chan's formula in the same fixed order, and normalizes its chunk from registers. One read
// and one write of the row, against two reads for the split kernels; the price is one barrier per
// row, during which the memory system idles. The barrier needs every block resident: the grid is
// sized to the SMs, and a block that waits much longer than any row could take traps instead of
// hanging. x and out are streamed past L2 (evict-first) so the affine weight and bias, read again
// for every row, stay there. RMSNorm (kCentre false) merges mean squares instead.
//
// @problem {{PROBLEM}}
// @precision fp32
// @scratch partials float64 {{ROWS}} * {{GRID}} * 3 uninitialized
// @scratch arrived int32 {{ROWS}} uninitialized
// @launch norm_arrivals_reset grid(cdiv({{ROWS}}, 256)) block(256) args(arrived)
// @launch norm_resident grid({{GRID}}) block({{BLOCK}}) smem({{PARKED}} * {{BLOCK}} * 16) args({{IN_LAUNCH}}{{OUT_LAUNCH}}, partials, arrived, {{OUT}})

constexpr long long kRows = {{ROWS}};    // rows
constexpr long long kLen = {{LEN}};      // elements per row (the normalized dims)
constexpr int kGrid = {{GRID}};          // blocks, all resident
constexpr int kBlock = {{BLOCK}};        // threads per block
constexpr int kBlocksPerSm = {{BLOCKS_PER_SM}}; // kGrid = SMs x this: every block resident
constexpr int kElems = {{ELEMS}};        // row values per thread
constexpr int kGroups = kElems / 4;      // float4s per thread
// The last kParked float4s of a thread wait in shared memory: with 32 values a thread, all in
// registers would leave too few for merging the partials (ptxas spilled at 64).
constexpr int kParked = {{PARKED}}, kHeld = kGroups - kParked;
static_assert(kHeld >= 1, "some values stay in registers");
constexpr long long kChunk = (kLen / 4 + kGrid - 1) / kGrid * 4; // elements per block (the last one's fewer)
constexpr int kWarps = kBlock / 32;
constexpr double kEps = {{EPS}};
constexpr bool kCentre = {{CENTRE}};     // LayerNorm subtracts the mean; RMSNorm does not
constexpr unsigned kFullMask = 0xffffffffu;
static_assert(kLen % 4 == 0 && kElems % 4 == 0, "whole float4s");
static_assert(kChunk <= (long long)kBlock * kElems, "a block's chunk fits its registers");

{{INPUT}}
{{OUTPUT}}
{{>block_sum_double}}

extern "C" __global__ void norm_arrivals_reset(int *__restrict__ arrived)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < kRows) arrived[i] = 0;
}

// (count, mean, M2) of b merged into a (Chan et al.).
__device__ __forceinline__ void merge(double &n, double &mean, double &m2, double nb, double meanb, double m2b)
{
    const double total = n + nb;
    if (total == 0.0) return;
    const double delta = meanb - mean;
    mean += delta * (nb / total);
    m2 += m2b + delta * delta * (n * nb / total);
    n = total;
}

// Waits until all kGrid blocks have published row `row`'s partials. Traps after about a second,
// which no row takes: a block that never arrives (too few SMs free) must not hang the GPU.
__device__ void wait_for_row(int *arrived, long long row)
{
    if (threadIdx.x == 0) {
        int seen = 0;
        for (long long spins = 0;; ++spins) {
            asm volatile("ld.acquire.gpu.global.s32 %0, [%1];" : "=r"(seen) : "l"(arrived + row) : "memory");
            if (seen >= kGrid) break;
            if (spins > (1LL << 24)) __trap();
            __nanosleep(32);
        }
    }
    __syncthreads();
}

// Every block merges the same partials in the same order: lane l takes blocks l, l + 32, ..., then
// the lanes merge pairwise down to lane 0, which leaves the row's mean and 1 / sqrt(var + eps) in
// stats. Not inlined: the row's values wait in registers meanwhile (the call saves a dozen of them
// to the stack, once a row, in one warp).
__device__ __noinline__ void merge_row(const double *row, double *stats)
{
    double cn = 0.0, cmean = 0.0, cm2 = 0.0;
    for (int b = threadIdx.x; b < kGrid; b += 32)
        merge(cn, cmean, cm2, __ldcg(row + 3 * b), __ldcg(row + 3 * b + 1), __ldcg(row + 3 * b + 2));
    for (int offset = 1; offset < 32; offset <<= 1) {
        const double on = __shfl_down_sync(kFullMask, cn, offset);
        const double omean = __shfl_down_sync(kFullMask, cmean, offset);
        const double om2 = __shfl_down_sync(kFullMask, cm2, offset);
        if (threadIdx.x % (2 * offset) == 0) merge(cn, cmean, cm2, on, omean, om2);
    }
    if (threadIdx.x == 0) {
        stats[0] = kCentre ? cmean : 0.0;
        stats[1] = 1.0 / sqrt(cm2 / kLen + kEps); // RMSNorm's chunk means are 0: M2 is the sum of squares
    }
}

extern "C" __global__ void __launch_bounds__(kBlock, kBlocksPerSm)
norm_resident({{IN_PARAMS}}{{OUT_PARAMS}}, double *__restrict__ partials, int *__restrict__ arrived,
              float *__restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    const Output output{ {{OUT_ARGS}} };
    const long long first = (long long)blockIdx.x * kChunk;                 // the chunk's first column
    const int held = int(min(kChunk, kLen - min(first, kLen)));            // its length
    __shared__ double stats[2];                                             // the row's mean, 1 / sqrt(var + eps)
    extern __shared__ float4 parked[];                                      // kParked float4s a thread

    for (long long row = 0; row < kRows; ++row) {
        const long long base = row * kLen + first;
        float4 v[kHeld];
        const auto value = [&](int g) -> float4 { return g < kHeld ? v[g] : parked[(g - kHeld) * kBlock + threadIdx.x]; };
#pragma unroll
        for (int g = 0; g < kGroups; ++g) {
            const int k = 4 * (g * kBlock + threadIdx.x);
            const float4 x = k < held ? in.at4(base + k) : make_float4(0.f, 0.f, 0.f, 0.f); // streaming loads
            if (g < kHeld) v[g] = x;
            else parked[(g - kHeld) * kBlock + threadIdx.x] = x;
        }
        // The chunk's statistics, two exact passes over registers.
        double s = 0.0;
#pragma unroll
        for (int g = 0; g < kGroups; ++g) {
            const float4 x = value(g);
            s += (double(x.x) + double(x.y)) + (double(x.z) + double(x.w));
        }
        const double n = double(held);
        const double chunkMean = kCentre && held > 0 ? block_sum(s) / n : 0.0;
        // Deviations from the chunk's mean are small next to the values: float squares, double sums.
        const float cm = float(chunkMean);
        double q = 0.0;
#pragma unroll
        for (int g = 0; g < kGroups; ++g) {
            const int k = 4 * (g * kBlock + threadIdx.x);
            if (k < held) {
                const float4 x = value(g);
                const float a = x.x - cm, b = x.y - cm, c = x.z - cm, d = x.w - cm;
                q += double((a * a + b * b) + (c * c + d * d));
            }
        }
        // Taken around cm, not the exact mean: Σ(x - cm)^2 = M2 + n (mean - cm)^2.
        const double chunkM2 = block_sum(q) - n * (chunkMean - cm) * (chunkMean - cm);
        if (threadIdx.x == 0) {
            double *p = partials + 3 * (row * kGrid + blockIdx.x);
            p[0] = n, p[1] = chunkMean, p[2] = chunkM2;
            __threadfence();
            atomicAdd(arrived + row, 1);
        }
        wait_for_row(arrived, row);

        if (threadIdx.x < 32) merge_row(partials + 3 * row * kGrid, stats);
        __syncthreads();
        const float mean = float(stats[0]), rstd = float(stats[1]);
#pragma unroll
        for (int g = 0; g < kGroups; ++g) {
            const int k = 4 * (g * kBlock + threadIdx.x);
            if (k < held) {
                const float4 x = value(g);
                const float4 c = make_float4((x.x - mean) * rstd, (x.y - mean) * rstd, (x.z - mean) * rstd, (x.w - mean) * rstd);
                __stcs(reinterpret_cast<float4 *>(out + base + k), output.at4(base + k, c));
            }
        }
        __syncthreads(); // stats[] is read before the next row overwrites it
    }
}
