// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// Conv2D as an implicit GEMM on Hopper's warpgroup tensor cores (wgmma) with the im2col operand in
// registers: each consumer thread gathers exactly the values its wgmma fragment holds, so the
// gathered tile never passes through shared memory.
//   x [{{BATCH}}, {{IN_C}}, {{IN_H}}, {{IN_W}}] (*) weight [{{OUT_C}}, {{IN_C}}, {{KH}}, {{KW}}], stride {{STRIDE_H}}x{{STRIDE_W}},
//   padding {{PAD_H}}x{{PAD_W}}, dilation {{DIL_H}}x{{DIL_W}} -> [{{BATCH}}, {{OUT_C}}, {{OUT_H}}, {{OUT_W}}], the epilogue (bias, ReLU, ...),
//   then (pooling {{POOL_KH}}x{{POOL_KW}} > 0) max or average pooling, stride {{POOL_SH}}x{{POOL_SW}}, padding {{POOL_PAD_H}}x{{POOL_PAD_W}}
//   -> [{{BATCH}}, {{OUT_C}}, {{POOL_OUT_H}}, {{POOL_OUT_W}}].
// GEMM view: M = output pixels, N = output channels, Kdim = C*KH*KW taps. A transposed convolution
// ({{TRANSPOSED}}) is one such GEMM per output phase ({{PHASES}} of them): M = its pixels, Kdim =
// C x the taps that feed it (parts/conv_phases.cuh). The phases of one tile of pixels are
// neighbouring blocks: they read the same input, and each writes every other word of the same
// output rows, which then reach memory as whole sectors instead of half-written ones.
// Why registers: with the gathered tile in shared memory, the gather's stores and the tensor
// cores' reads of it kept the L1/shared-memory pipe about 90% busy, and that pipe set the pace.
// 1. conv_prepare splits the weight into TF32 high and low parts laid out as the tensor cores read
//    them (128-byte swizzled rows, zero-padded tiles), one set per phase.
// 2. conv_wgmma_regs: one producer warp streams the weight tiles of each 32-deep K step with bulk
//    copies into a {{STAGES}}-stage ring guarded by mbarriers; {{WGS}} consumer warpgroup(s) of 64
//    pixels each load their fragment of the im2col tile straight from x ({{DEPTH}} steps' loads
//    in flight during a step's products; 4 lanes read 4 neighbouring taps of one pixel and 8
//    pixels sit side by side, so one warp load covers a short run of an input row), split it
//    into hi + lo in registers and issue wgmma.m64n{{BN}}k8 with A from registers:
//    lo·hi + hi·lo + hi·hi (3xTF32, fp32-accurate) or hi·hi (TF32). Tensor-core accumulation
//    truncates, so it runs {{PROMOTE}} K steps at a time before each chunk is added to an fp32 sum.
// 3. With pooling, the conv result goes to scratch and pool_windows reads each window from there.
// @problem {{PROBLEM}}
// @precision {{PRECISION}}
// @scratch wtiles float32 ({{SPLIT}} / 2 + 1) * {{PHASES}} * cdiv({{OUT_C}}, {{BN}}) * {{BN}} * cdiv({{TAPS_K}}, 32) * 32 uninitialized
{{#POOL}}
// @scratch act float32 {{BATCH}} * {{OUT_C}} * {{OUT_H}} * {{OUT_W}} uninitialized
{{/POOL}}
// @launch conv_prepare grid(cdiv({{PHASES}} * cdiv({{OUT_C}}, {{BN}}) * {{BN}} * cdiv({{TAPS_K}}, 32) * 4, 256)) block(256) args({{WEIGHT}}, wtiles)
// @launch conv_wgmma_regs grid(cdiv({{ROWS_M}}, 64 * {{WGS}}) * {{PHASES}}, cdiv({{OUT_C}}, {{BN}})) block(128 * {{WGS}} + 32) smem({{STAGES}} * ({{SPLIT}} / 2 + 1) * {{BN}} * 128 + cdiv({{TAPS_K}}, 32) * 32 * 8 + 2048) args({{X}}, wtiles, {{CONV_OUT}}{{EPILOGUE_ARGS}})
{{#POOL}}
// @launch pool_windows grid(cdiv({{BATCH}} * {{OUT_C}} * {{POOL_OUT_H}} * {{POOL_OUT_W}}, 256)) block(256) args(act, {{OUT}})
{{/POOL}}

{{>operand_parts}}

// ---- problem sizes and tile shapes ----
{{>conv_sizes}}

// ---- the gather: a tap's offset and shifts, a pixel's window corner; a transposed one's phases ----
{{>conv_taps}}
constexpr bool kTransposed = {{TRANSPOSED}};
{{>conv_phases}}
static_assert(kRowsM == {{ROWS_M}} && kTapsK == {{TAPS_K}}, "the launch's sizes are the template's");

constexpr int kWGs = {{WGS}};                            // consumer warpgroups, 64 pixels each
constexpr int kBM = 64 * kWGs, kBN = {{BN}}, kBK = 32;  // block tile; 32 floats = one 128-byte row
using Elem = float;                                      // a weight tile's values: TF32 parts
constexpr int kStages = {{STAGES}};
constexpr int kPromote = {{PROMOTE}};                    // K steps per tensor-core accumulation chunk
constexpr int kSplit = {{SPLIT}};                        // 3: 3xTF32, 1: TF32
constexpr int kParts = kSplit == 3 ? 2 : 1;
constexpr int kMinBlocks = {{BLOCKS}};                   // blocks per SM the registers are capped for
constexpr int kDepth = {{DEPTH}};                        // K steps of the gather in flight

__host__ __device__ constexpr int cdiv(int a, int b) { return (a + b - 1) / b; }
constexpr int kTilesN = cdiv(kGemmN, kBN), kTilesK = cdiv(kTapsK, kBK);
constexpr int kKPadded = kTilesK * kBK;
constexpr int kThreads = 128 * kWGs + 32;                // the consumers, then the producer warp

// Weight tiles in scratch: [phase][part][tileN][tileK][BN][32].
constexpr long long kTileB = (long long)kBN * kBK;
constexpr long long kPartB = (long long)kTilesN * kTilesK * kTileB;

// Shared memory: the ring of weight tiles (each a whole number of 1024-byte swizzle atoms), then
// the tap table, then the barriers.
constexpr int kStageBytes = kParts * kBN * kBK * 4;

static_assert(kWGs == 1 || kWGs == 2, "one or two consumer warpgroups");
static_assert(kBN == 16 || kBN == 32 || kBN == 64 || kBN == 96 || kBN == 128, "wgmma tiles of 16 to 128 channels");
static_assert(kSplit == 1 || kSplit == 3, "split 1 (TF32) or 3 (3xTF32)");
static_assert(kStages >= 2 && kPromote >= 1, "at least two stages");
static_assert(kDepth == 1 || kDepth == 2, "one or two K steps of the gather in flight");
static_assert(kMinBlocks >= 1 && kMinBlocks <= 4, "one to four blocks per SM");
static_assert(kStages * kStageBytes + kKPadded * 8 + 2048 <= {{SMEM_PER_BLOCK}}, "the ring must fit in shared memory");

// ---- 1. weight tiles ----
{{>conv_tile_weight}}
{{>conv_weight_tiles}}

// ---- 2. the convolution ----

{{>hopper_pipeline}}

{{>wgmma_tf32_regs}}

extern "C" __global__ void __launch_bounds__(kThreads, kMinBlocks)
conv_wgmma_regs(const float *__restrict__ x, const float *__restrict__ wtiles, float *__restrict__ out{{EPILOGUE_PARAMS}})
{
    extern __shared__ unsigned char smemRaw[];
    // The swizzle pattern follows address bits, so the ring starts on a 1024-byte boundary.
    unsigned char *ring = smemRaw + ((1024 - smem_addr(smemRaw) % 1024) % 1024);
    int2 *taps = reinterpret_cast<int2 *>(ring + kStages * kStageBytes);
    unsigned long long *full = reinterpret_cast<unsigned long long *>(taps + kKPadded);
    unsigned long long *empty = full + kStages;

    const int phase = blockIdx.x % kPhases, m0 = blockIdx.x / kPhases * kBM, tileN = blockIdx.y, n0 = tileN * kBN;
    const Phase f = phase_of(phase);

    {{>conv_tap_table}}
    if (threadIdx.x == 0) {
        for (int s = 0; s < kStages; ++s) {
            mbar_init(&full[s], 1);      // the producer's expect_tx
            mbar_init(&empty[s], kWGs);  // one thread per consumer warpgroup
        }
        mbar_init_fence();
    }
    __syncthreads();

    const int wg = threadIdx.x / 128;
    if (wg == kWGs) {
        // The producer warp: one thread streams the weight tiles, kStages steps ahead at most.
        if (threadIdx.x % 32 == 0) {
            const float *wBase = wtiles + phase * kPhaseB + (long long)tileN * kTilesK * kTileB;
            for (int kt = 0; kt < kTilesK; ++kt) {
                const int s = kt % kStages;
                if (kt >= kStages) mbar_wait(&empty[s], ((kt / kStages) - 1) & 1);
                unsigned char *stage = ring + s * kStageBytes;
                mbar_expect_tx(&full[s], kStageBytes);
#pragma unroll
                for (int q = 0; q < kParts; ++q)
                    bulk_copy(stage + q * kBN * kBK * 4, wBase + q * kPartB + kt * kTileB, kBN * kBK * 4, &full[s]);
            }
        }
        return;
    }

    // Consumers: warpgroup wg owns pixels 64 wg .. 64 wg + 63 of the block tile. This thread's
    // fragment rows are pixels `row` and `row + 8`, its columns taps lane % 4 (+4) of each k8 slice.
    const int lane = threadIdx.x % 32, warp = (threadIdx.x % 128) / 32, quad = lane % 4;
    const int row = wg * 64 + warp * 16 + lane / 4;
    int corner[2], id0[2], ih0[2], iw0[2];
#pragma unroll
    for (int p = 0; p < 2; ++p) { // a pixel past M reads zeros
        if constexpr (kTransposed)
            phase_pixel_corner(m0 + row + 8 * p, f, corner[p], id0[p], ih0[p], iw0[p]);
        else
            pixel_corner(m0 + row + 8 * p, corner[p], id0[p], ih0[p], iw0[p]);
    }
    // A pixel whose window lies inside x for every real tap skips the bounds checks: when all the
    // warp's pixels do, a step of real taps only (not the zero-padded end of K, nor a phase's taps
    // past its own) loads straight. The checks were most of the gather's instructions, and the
    // issue slots bounded a 3x3x3 convolution over 16 channels (a search of it: 2.83 -> 2.29 ms, H100).
    int reachD = (kKD - 1) * kDilD, reachH = (kKH - 1) * kDilH, reachW = (kKW - 1) * kDilW; // the largest shifts
    int realK = kGemmK;
    if constexpr (kTransposed) {
        reachD = (f.d.n - 1) * f.d.step * kDilD / kStrideD;
        reachH = (f.h.n - 1) * f.h.step * kDilH / kStrideH;
        reachW = (f.w.n - 1) * f.w.step * kDilW / kStrideW;
        realK = kInC * f.taps;
    }
    bool interior = true;
#pragma unroll
    for (int p = 0; p < 2; ++p)
        interior = interior && id0[p] >= 0 && id0[p] + reachD < kInD && ih0[p] >= 0 && ih0[p] + reachH < kInH &&
                   iw0[p] >= 0 && iw0[p] + reachW < kInW;
    const int fastSteps = __all_sync(0xffffffffu, interior) ? realK / kBK : 0;
    // Step kt's fragment values: v[2j + p] is pixel p at tap 32 kt + 4 j + quad, so slice kk's
    // fragment is v[4 kk .. 4 kk + 3].
    const auto gather = [&](int kt, float (&v)[16]) {
        if (kt < fastSteps) {
#pragma unroll
            for (int j = 0; j < 8; ++j) {
                const int offset = taps[kt * kBK + 4 * j + quad].x;
#pragma unroll
                for (int p = 0; p < 2; ++p) v[2 * j + p] = __ldg(x + corner[p] + offset);
            }
            return;
        }
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            const int2 tap = taps[kt * kBK + 4 * j + quad];
#pragma unroll
            for (int p = 0; p < 2; ++p) {
                v[2 * j + p] = tap_inside(id0[p], ih0[p], iw0[p], tap.y) ? __ldg(x + corner[p] + tap.x) : 0.0f;
            }
        }
    };

    // `total` is what the store reads: acc itself when one chunk covers all of K.
    constexpr bool kOneChunk = kPromote >= kTilesK;
    float acc[kBN / 2], sum[kBN / 2];
    float(&total)[kBN / 2] = kOneChunk ? acc : sum;
#pragma unroll
    for (int i = 0; i < kBN / 2; ++i) acc[i] = sum[i] = 0.0f;
    // kDepth K steps of gathered values in flight: v[d] holds step kt while kt % kDepth == d. The
    // loop runs kDepth steps per pass so that every index into v is a constant (registers).
    float v[kDepth][16], hi[16], lo[16];
#pragma unroll
    for (int d = 0; d < kDepth; ++d)
        if (d < kTilesK) gather(d, v[d]);

    for (int k0 = 0; k0 < kTilesK; k0 += kDepth) {
#pragma unroll
        for (int d = 0; d < kDepth; ++d) {
            const int kt = k0 + d;
            if (kt >= kTilesK) break;
#pragma unroll
            for (int i = 0; i < 16; ++i) {
                hi[i] = to_tf32(v[d][i]);
                lo[i] = kParts == 2 ? to_tf32(v[d][i] - hi[i]) : 0.0f;
            }
            if (kt + kDepth < kTilesK) gather(kt + kDepth, v[d]); // in flight during the next kDepth steps' products

            const int s = kt % kStages;
            mbar_wait(&full[s], (kt / kStages) & 1);
            const unsigned long long bHi = tile_desc(ring + s * kStageBytes);
            const unsigned long long bLo = bHi + ((kBN * kBK * 4) >> 4); // the next part, same layout
            fence_operands(acc);
            fence_operands(hi);
            fence_operands(lo);
            wgmma_fence();
            const bool chunkStart = kt % kPromote == 0;
#pragma unroll
            for (int kk = 0; kk < kBK / 8; ++kk) {
                // 8 floats = 32 bytes further along the (swizzled) rows: +2 in the 16-byte address field.
                const unsigned long long step = 2 * kk;
                const float(&aHi)[4] = *reinterpret_cast<const float(*)[4]>(hi + 4 * kk);
                const float(&aLo)[4] = *reinterpret_cast<const float(*)[4]>(lo + 4 * kk);
                const int keep = !(chunkStart && kk == 0); // a chunk's first product overwrites the accumulator
                if constexpr (kSplit == 3) {
                    // Small terms first, so they are not lost against the large running sum.
                    wgmma_tf32_regs(acc, aLo, bHi + step, keep);
                    wgmma_tf32_regs(acc, aHi, bLo + step, 1);
                    wgmma_tf32_regs(acc, aHi, bHi + step, 1);
                } else {
                    wgmma_tf32_regs(acc, aHi, bHi + step, keep);
                }
            }
            wgmma_commit();
            // The products read hi and lo from registers until they finish: wait before the next
            // split overwrites them (the fences keep the compiler from reusing them earlier).
            wgmma_wait<0>();
            fence_operands(acc);
            fence_operands(hi);
            fence_operands(lo);
            if (threadIdx.x % 128 == 0) mbar_arrive(&empty[s]);
            if constexpr (!kOneChunk) {
                if ((kt + 1) % kPromote == 0 || kt + 1 == kTilesK) {
#pragma unroll
                    for (int i = 0; i < kBN / 2; ++i) sum[i] += acc[i];
                }
            }
        }
    }

    const int c = wg;
{{>conv_wgmma_store}}
}

// ---- 3. pooling of the conv result (pooling problems only) ----
{{>conv_pool}}
