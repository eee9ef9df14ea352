// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// Conv2D as an implicit GEMM on Hopper's warpgroup tensor cores (wgmma), with its epilogue fused
// and, when the problem pools, a pooling pass after it.
//   x [{{BATCH}}, {{IN_C}}, {{IN_H}}, {{IN_W}}] (*) weight [{{OUT_C}}, {{IN_C}}, {{KH}}, {{KW}}], stride {{STRIDE_H}}x{{STRIDE_W}},
//   padding {{PAD_H}}x{{PAD_W}}, dilation {{DIL_H}}x{{DIL_W}} -> [{{BATCH}}, {{OUT_C}}, {{OUT_H}}, {{OUT_W}}], the epilogue (bias, ReLU, ...),
//   then (pooling {{POOL_KH}}x{{POOL_KW}} > 0) max or average pooling, stride {{POOL_SH}}x{{POOL_SW}}, padding {{POOL_PAD_H}}x{{POOL_PAD_W}}
//   -> [{{BATCH}}, {{OUT_C}}, {{POOL_OUT_H}}, {{POOL_OUT_W}}].
// GEMM view: M = output pixels, N = output channels, Kdim = C*KH*KW taps.
// 1. conv_prepare splits the weight (a [N][Kdim] matrix, already K-major) into TF32 high and low
//    parts (or, with BF16, bf16 ones) laid out as the tensor cores read them (128-byte swizzled
//    rows, zero-padded tiles).
// 2. conv_wgmma: {{PRODUCERS}} producer warpgroup(s) gather the im2col tile of each K step (32 taps, 64 with BF16) straight
//    from x ({{PRODUCERS}} warpgroup(s), one output pixel per thread or two, tap offsets from a shared table; the next step's loads
//    are in flight while this step is stored), splits every value into hi + lo as it stores it
//    (swizzled), and one of its threads streams the matching weight tiles with bulk copies;
//    {{WGS}} consumer warpgroup(s) of 64 pixels issue wgmma from shared memory (k8 TF32, or k16 bf16):
//    lo·hi + hi·lo + hi·hi (3xTF32 or 3xbf16) or hi·hi (TF32), {{STAGES}} stages in a ring
//    guarded by mbarriers. Tensor-core accumulation truncates, so it runs {{PROMOTE}} K steps at a
//    time before each chunk is added to an fp32 register sum.
// 3. With pooling, the conv result goes to scratch and pool_windows reads each window from there:
//    pooling inside the conv blocks (rectangular tiles pooled from shared memory, split windows
//    merged with atomics) measured 35% slower than this extra pass on the seed conv + max-pool.
// @problem {{PROBLEM}}
// @precision {{PRECISION}}
// @scratch wtiles float32 ({{SPLIT}} / 2 + 1) * cdiv({{OUT_C}}, {{BN}}) * {{BN}} * cdiv({{IN_C}} * {{KD}} * {{KH}} * {{KW}}, 32 * ({{BF16}} + 1)) * 32 uninitialized
{{#POOL}}
// @scratch act float32 {{BATCH}} * {{OUT_C}} * {{OUT_H}} * {{OUT_W}} uninitialized
{{/POOL}}
// @launch conv_prepare grid(cdiv(cdiv({{OUT_C}}, {{BN}}) * {{BN}} * cdiv({{IN_C}} * {{KD}} * {{KH}} * {{KW}}, 32 * ({{BF16}} + 1)) * 4, 256)) block(256) args({{WEIGHT}}, wtiles)
// @launch conv_wgmma grid(cdiv({{BATCH}} * {{OUT_D}} * {{OUT_H}} * {{OUT_W}}, 64 * {{WGS}}), cdiv({{OUT_C}}, {{BN}})) block(128 * ({{WGS}} + {{PRODUCERS}})) smem({{STAGES}} * ({{SPLIT}} / 2 + 1) * (64 * {{WGS}} + {{BN}}) * 128 + cdiv({{IN_C}} * {{KD}} * {{KH}} * {{KW}}, 32 * ({{BF16}} + 1)) * 32 * ({{BF16}} + 1) * 8 + 2048) args({{X}}, wtiles, {{CONV_OUT}}{{EPILOGUE_ARGS}})
{{#POOL}}
// @launch pool_windows grid(cdiv({{BATCH}} * {{OUT_C}} * {{POOL_OUT_H}} * {{POOL_OUT_W}}, 256)) block(256) args(act, {{OUT}})
{{/POOL}}

{{>operand_parts}}

// ---- problem sizes and tile shapes ----
{{>conv_sizes}}

// ---- the gather: a tap's offset and shifts, a pixel's window corner ----
{{>conv_taps}}
// Plain convolutions only: the shared parts name a transposed one's phases (one here).
constexpr bool kTransposed = false;
{{>conv_phases}}

constexpr int kWGs = {{WGS}};                            // consumer warpgroups, 64 pixels each
constexpr bool kBf16 = {{BF16}};                         // bf16 parts (else TF32)
constexpr bool kHalf = kBf16;                            // 16-bit operands, as the consumers name them
using Elem = OperandType<kHalf, kBf16>::Type;           // one value of a tile
constexpr int kBM = 64 * kWGs, kBN = {{BN}};             // block tile
constexpr int kBK = 128 / sizeof(Elem);                  // taps per K step: one 128-byte row
constexpr int kChunk = 16 / sizeof(Elem);                // taps per 16-byte chunk of a row
constexpr int kStages = {{STAGES}};
constexpr int kPromote = {{PROMOTE}};                    // K steps per tensor-core accumulation chunk
constexpr int kSplit = {{SPLIT}};                        // 3: 3xTF32 or 3xbf16, 1: TF32
constexpr int kParts = kSplit == 3 ? 2 : 1;

__host__ __device__ constexpr int cdiv(int a, int b) { return (a + b - 1) / b; }
constexpr int kTilesN = cdiv(kGemmN, kBN), kTilesK = cdiv(kGemmK, kBK);
constexpr int kKPadded = kTilesK * kBK;
constexpr int kProducers = {{PRODUCERS}};                 // gathering warpgroups
constexpr int kThreads = 128 * (kWGs + kProducers);

// Weight tiles in scratch: [part][tileN][tileK][BN][kBK], in Elem.
constexpr long long kTileB = (long long)kBN * kBK;
constexpr long long kPartB = (long long)kTilesN * kTilesK * kTileB;

// Shared memory: the ring (per stage the A parts, then the B parts; every tile a whole number of
// 1024-byte swizzle atoms), then the tap table.
constexpr int kStageBytesA = kParts * kBM * 128, kStageBytesB = kParts * kBN * 128;
constexpr int kStageBytes = kStageBytesA + kStageBytesB;

// The producer warpgroups: 128 * PRODUCERS / BM threads per pixel, each gathering a share of the
// kBK taps of a step.
constexpr int kThreadsPerRow = 128 * kProducers / kBM;
constexpr int kTapsPerThread = kBK / kThreadsPerRow;

// Two blocks per SM where their shared memory fits and each thread keeps at least 85 registers
// (registers are capped to allow the second block): enough for 16 TF32 taps in flight and one
// accumulator of up to 96 channels, not for 32 taps, 16 bf16 ones (ptxas spilled them), 128
// channels or a separate fp32 sum (a K longer than one chunk).
constexpr int kSmemBytes = kStages * kStageBytes + kKPadded * 8 + 2048;
constexpr int kMinBlocks = 2 * kSmemBytes <= {{SMEM_PER_SM}} - 2048 && kThreads <= 384 &&
        kTapsPerThread <= (kHalf ? 8 : 16) && kBN <= 96 && kPromote >= kTilesK
    ? 2
    : 1;

static_assert(kWGs == 1 || kWGs == 2, "one or two consumer warpgroups");
static_assert(kProducers == 1 || kProducers == 2, "one or two producer warpgroups");
static_assert(kThreadsPerRow >= 1 && kThreadsPerRow <= 8 && kTapsPerThread % kChunk == 0, "whole 16-byte chunks per thread");
static_assert(kBN == 64 || kBN == 96 || kBN == 128, "wgmma tiles of 64, 96 or 128 channels");
static_assert(kSplit == 3 || (kSplit == 1 && !kHalf), "split 1 (TF32) or 3 (3xTF32 or 3xbf16)");
static_assert(kStages >= 2 && kPromote >= 1, "at least two stages");
static_assert(kStages * kStageBytes + kKPadded * 8 + 2048 <= {{SMEM_PER_BLOCK}}, "the ring must fit in shared memory");

// ---- 1. weight tiles ----
{{>conv_tile_weight}}
{{>conv_weight_tiles}}

// ---- 2. the convolution ----

{{>hopper_pipeline}}
{{>stage_b_copy}}

{{>wgmma_smem}}


extern "C" __global__ void __launch_bounds__(kThreads, kMinBlocks)
conv_wgmma(const float *__restrict__ x, const float *__restrict__ wtiles, float *__restrict__ out{{EPILOGUE_PARAMS}})
{
    extern __shared__ unsigned char smemRaw[];
    // The swizzle pattern follows address bits, so the ring starts on a 1024-byte boundary.
    unsigned char *ring = smemRaw + ((1024 - smem_addr(smemRaw) % 1024) % 1024);
    int2 *taps = reinterpret_cast<int2 *>(ring + kStages * kStageBytes);
    unsigned long long *full = reinterpret_cast<unsigned long long *>(taps + kKPadded);
    unsigned long long *empty = full + kStages;

    const int m0 = blockIdx.x * kBM, tileN = blockIdx.y, n0 = tileN * kBN;
    const Phase f = phase_of(0);

    {{>conv_tap_table}}
    if (threadIdx.x == 0) {
        for (int s = 0; s < kStages; ++s) {
            mbar_init(&full[s], 128 * kProducers + 1); // every gathering thread, plus the weight copies' expect_tx
            mbar_init(&empty[s], kWGs);
        }
        mbar_init_fence();
    }
    __syncthreads();

    const int wg = threadIdx.x / 128;
    if (wg < kProducers) {
        // Producer warpgroups: thread i gathers pixel m0 + i % BM, taps part i / BM of each step.
        const int row = threadIdx.x % kBM, part = threadIdx.x / kBM;
        const int m = m0 + row;
        int corner, id0, ih0, iw0;
        pixel_corner(m, corner, id0, ih0, iw0); // a pixel past M reads zeros
        const Elem *wBase = reinterpret_cast<const Elem *>(wtiles) + (long long)tileN * kTilesK * kTileB;
        // The taps of step kt for this thread; their loads are issued one step ahead.
        const auto gather = [&](int kt, float (&v)[kTapsPerThread]) {
            const int tap0 = kt * kBK + part * kTapsPerThread;
#pragma unroll
            for (int j = 0; j < kTapsPerThread; ++j) {
                const int2 tap = taps[tap0 + j];
                v[j] = tap_inside(id0, ih0, iw0, tap.y) ? __ldg(x + corner + tap.x) : 0.0f;
            }
        };
        float next[kTapsPerThread];
        gather(0, next);
        for (int kt = 0; kt < kTilesK; ++kt) {
            const int s = kt % kStages;
            float v[kTapsPerThread];
#pragma unroll
            for (int j = 0; j < kTapsPerThread; ++j) v[j] = next[j];
            if (kt + 1 < kTilesK) gather(kt + 1, next);
            unsigned char *stage = stage_with_b(ring, full, empty, kt, wBase);
            // Split and store, kChunk taps = one 16-byte chunk.
            float4 *rowHi = reinterpret_cast<float4 *>(stage + row * 128);
#pragma unroll
            for (int j = 0; j < kTapsPerThread; j += kChunk) {
                const int slot = ((part * kTapsPerThread + j) / kChunk) ^ (row & 7);
                float hi[kChunk], lo[kChunk];
#pragma unroll
                for (int e = 0; e < kChunk; ++e)
                    split_value<Elem>(v[j + e], hi[e], lo[e]);
                rowHi[slot] = pack16<Elem>(hi);
                if constexpr (kParts == 2)
                    rowHi[kBM * 8 + slot] = pack16<Elem>(lo);
            }
            // Make the stores visible to the tensor cores' (async) reads, then count this thread in.
            fence_proxy_async();
            mbar_arrive(&full[s]);
        }
        return;
    }

    // Consumers: warpgroup c owns pixels 64c .. 64c+63 of the block tile.
    const int c = wg - kProducers;
    const int steps = kTilesK; // every block runs all of K
{{>wgmma_consumer}}

{{>conv_wgmma_store}}
}

// ---- 3. pooling of the conv result (pooling problems only) ----
{{>conv_pool}}
