// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// Rows too long for a thread-block cluster: each row is spread over kPerRow blocks, one block per
// SM, kAtOnce rows at a time over the whole GPU, and each block holds its chunk of the current row
// in registers (kGroups float4s a thread, kBlock apart). Block b takes chunk b % kPerRow of rows
// b / kPerRow, + kAtOnce, + 2 kAtOnce, ... in turn. While it works on one row, a bulk copy (TMA)
// is already bringing its chunk of the next into shared memory, so reads stream on through the
// steps that wait. A block takes its chunk's exact two-pass statistics from registers (mean, then
// the sum of squared deviations from it), publishes them in scratch and counts itself in on the
// row's arrival counter (release); once all kPerRow blocks of the row have arrived (acquire),
// each combines the partials in the same order (Chan's formula, in double), so all get the same
// mean and variance, and writes its normalized chunk from registers with evict-first stores. One
// read of the input and one write of the output; the affine weight and bias, the same chunk for
// every row, are read with evict-last marks ({{KEPT}}) so that the streaming rows might leave
// them in L2 (on an H100, row-sized ones still came from DRAM for every row). Statistics are of
// d = x - shift (shift: the row's first element), so a mean far from zero next to the spread costs
// no digits. All blocks must be resident at once: the grid is at most one block per SM, and a
// block's registers and shared memory admit no second one. RMSNorm (kCentre false) publishes sums
// of squares only.
//
// @problem {{PROBLEM}}
// @precision fp32
// @scratch arrived int32 {{ROWS}}
// @scratch partials float64 {{PARTIAL_COUNT}}
// @launch norm_grid grid({{GRID}}) block({{BLOCK}}) smem({{SMEM}}) args({{IN_LAUNCH}}{{OUT_LAUNCH}}, arrived, partials, {{OUT}})

constexpr long long kRows = {{ROWS}};          // rows
constexpr long long kLen = {{LEN}};            // elements per row (the normalized dims)
constexpr long long kRowGroups = kLen / 4;     // float4s per row
constexpr int kPerRow = {{SPLIT}};             // blocks per row
constexpr int kAtOnce = {{GRID}} / kPerRow;    // rows at a time
constexpr int kSpan = {{SPAN}};                // float4s per chunk (a row's last chunk may be shorter)
constexpr int kBlock = {{BLOCK}};              // threads per block
constexpr int kGroups = {{ELEMS}} / 4;         // float4s per thread
constexpr int kWarps = kBlock / 32;
constexpr double kEps = {{EPS}};
constexpr bool kCentre = {{CENTRE}};           // LayerNorm subtracts the mean; RMSNorm does not
constexpr unsigned kFullMask = 0xffffffffu;
static_assert(kLen % 4 == 0 && (long long)kPerRow * kSpan >= kRowGroups, "the chunks cover the row");
static_assert((long long)kGroups * kBlock >= kSpan, "a block holds its chunk");

// Loads that ask L2 to keep what they read (evict-last).
template <class T>
__device__ __forceinline__ T ld_kept(const T* p) { return __ldg(p); }
template <>
__device__ __forceinline__ float ld_kept(const float* p)
{
    float v;
    asm("{\n.reg .b64 policy;\ncreatepolicy.fractional.L2::evict_last.b64 policy, 1.0;\n"
        "ld.global.nc.L2::cache_hint.f32 %0, [%1], policy;\n}\n" : "=f"(v) : "l"(p));
    return v;
}
template <>
__device__ __forceinline__ float4 ld_kept(const float4* p)
{
    float4 v;
    asm("{\n.reg .b64 policy;\ncreatepolicy.fractional.L2::evict_last.b64 policy, 1.0;\n"
        "ld.global.nc.L2::cache_hint.v4.f32 {%0, %1, %2, %3}, [%4], policy;\n}\n"
        : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p));
    return v;
}

{{INPUT}}
{{OUTPUT}}
{{>block_sum}}
{{>block_sum_double}}
{{>mbarrier}}

// The bulk copy of a chunk, marked evict-first in L2: the input is read once, and L2 is better
// left to the weight and bias that every row reads again.
__device__ __forceinline__ void copy_chunk(float4* dst, const float* src, unsigned bytes, unsigned long long* bar)
{
    asm volatile("{\n.reg .b64 policy;\n"
                 "createpolicy.fractional.L2::evict_first.b64 policy, 1.0;\n"
                 "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], policy;\n}\n"
                 ::"r"(smem_addr(dst)), "l"(src), "r"(bytes), "r"(smem_addr(bar)) : "memory");
}

// This block's count on the row's counter, then a wait until every block has counted itself in.
__device__ __forceinline__ void arrive_and_wait(int* counter)
{
    asm volatile("red.release.gpu.global.add.s32 [%0], 1;\n" ::"l"(counter) : "memory");
    int seen = 0;
    do
        asm volatile("ld.acquire.gpu.global.s32 %0, [%1];\n" : "=r"(seen) : "l"(counter) : "memory");
    while (seen < kPerRow);
}

// Elements in chunk c of a row.
__device__ __forceinline__ double chunk_count(int c)
{
    return 4.0 * double(min((long long)kSpan, kRowGroups - (long long)c * kSpan));
}

__device__ __forceinline__ float4 minus(float4 v, float s) { return make_float4(v.x - s, v.y - s, v.z - s, v.w - s); }

extern "C" __global__ void __launch_bounds__(kBlock, 1)
norm_grid({{IN_PARAMS}}{{OUT_PARAMS}}, int* __restrict__ arrived, double* __restrict__ partials, float* __restrict__ out)
{
    extern __shared__ float4 next[]; // the chunk of the row to come, as copied
    __shared__ unsigned long long copied;
    __shared__ float stats[2];       // the row's mean and 1 / sqrt(var + eps)
    const Input in{ {{IN_ARGS}} };
    const Output output{ {{OUT_ARGS}} };
    const int chunk = blockIdx.x % kPerRow;
    const long long first = (long long)chunk * kSpan; // the chunk's first float4 in a row
    long long row = blockIdx.x / kPerRow;
    if (row >= kRows)
        return;
    const int span = int(min((long long)kSpan, kRowGroups - first));
    const unsigned bytes = unsigned(span) * 16u;
    const float count = 4.0f * span;

    if (threadIdx.x == 0) {
        mbar_init(&copied, 1);
        mbar_init_fence();
        mbar_expect_tx(&copied, bytes);
        copy_chunk(next, in.held_data() + row * kLen + 4 * first, bytes, &copied);
    }
    __syncthreads();

    for (unsigned pass = 0; row < kRows; row += kAtOnce, ++pass) {
        const long long base = row * kLen + 4 * first; // the chunk's first element
        mbar_wait(&copied, pass & 1);
        const float shift = kCentre ? in.at(row * kLen) : 0.0f;
        float4 d[kGroups]; // x - shift
        float sum = 0.0f;
#pragma unroll
        for (int g = 0; g < kGroups; ++g) {
            const int j = g * kBlock + threadIdx.x;
            d[g] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (j < span) {
                const float4 h = next[j];
                const long long i = base + 4ll * j;
                d[g] = minus(make_float4(in.at_held(i, h.x), in.at_held(i + 1, h.y), in.at_held(i + 2, h.z),
                                         in.at_held(i + 3, h.w)),
                             shift);
                sum += (d[g].x + d[g].y) + (d[g].z + d[g].w);
            }
        }
        __syncthreads(); // every thread has its values: the buffer takes the next row
        if (threadIdx.x == 0 && row + kAtOnce < kRows) {
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
            mbar_expect_tx(&copied, bytes);
            copy_chunk(next, in.held_data() + base + kAtOnce * kLen, bytes, &copied);
        }

        // The chunk's mean and sum of squared deviations (RMSNorm: sum of squares), from registers.
        const float local = kCentre ? block_sum(sum) / count : 0.0f;
        float squares = 0.0f;
#pragma unroll
        for (int g = 0; g < kGroups; ++g)
            if (g * kBlock + threadIdx.x < span) {
                const float4 c = minus(d[g], local);
                squares += (c.x * c.x + c.y * c.y) + (c.z * c.z + c.w * c.w);
            }
        squares = block_sum(squares);
        double* mine = partials + 2 * row * kPerRow;
        if (threadIdx.x == 0) {
            mine[2 * chunk] = local;
            mine[2 * chunk + 1] = squares;
            arrive_and_wait(arrived + row);
        }
        __syncthreads();
        if (threadIdx.x < 32) {
            // Every block adds the same partials in the same order: the same statistics everywhere.
            // The peers' partials are read from L2 (ld.cg): L1 is not coherent across SMs.
            double total = 0.0;
            for (int c = threadIdx.x; c < kPerRow; c += 32)
                total += chunk_count(c) * __ldcg(mine + 2 * c);
            const double mean = kCentre ? warp_sum(total) / double(kLen) : 0.0;
            double m2 = 0.0;
            for (int c = threadIdx.x; c < kPerRow; c += 32) {
                const double shift = __ldcg(mine + 2 * c) - mean;
                m2 += __ldcg(mine + 2 * c + 1) + chunk_count(c) * shift * shift;
            }
            m2 = warp_sum(m2);
            if (threadIdx.x == 0) {
                stats[0] = float(mean);
                stats[1] = float(1.0 / sqrt(m2 / double(kLen) + kEps));
            }
        }
        __syncthreads();
        const float mean = stats[0], rstd = stats[1];
#pragma unroll
        for (int g = 0; g < kGroups; ++g) {
            const int j = g * kBlock + threadIdx.x;
            if (j < span) {
                const long long i = base + 4ll * j;
                const float4 c = minus(d[g], mean);
                __stcs(reinterpret_cast<float4*>(out + i),
                       output.at4(i, make_float4(c.x * rstd, c.y * rstd, c.z * rstd, c.w * rstd)));
            }
        }
    }
}
