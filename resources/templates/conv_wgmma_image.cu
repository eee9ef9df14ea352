// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// Conv2D (or 1-D) as an implicit GEMM on Hopper's warpgroup tensor cores (wgmma) whose im2col rows
// are contiguous runs of a prepared image, copied 16 bytes at a time instead of gathered tap by tap.
//   x [{{BATCH}}, {{IN_C}}, {{IN_H}}, {{IN_W}}] (*) weight [{{OUT_C}}, {{IN_C}}, {{KH}}, {{KW}}], stride {{STRIDE_H}}x{{STRIDE_W}},
//   padding {{PAD_H}}x{{PAD_W}} -> [{{BATCH}}, {{OUT_C}}, {{OUT_H}}, {{OUT_W}}], the epilogue (bias, ReLU, ...),
//   then (pooling {{POOL_KH}}x{{POOL_KW}} > 0) max or average pooling, stride {{POOL_SH}}x{{POOL_SW}}, padding {{POOL_PAD_H}}x{{POOL_PAD_W}}
//   -> [{{BATCH}}, {{OUT_C}}, {{POOL_OUT_H}}, {{POOL_OUT_W}}].
// 1. conv_image writes x once as an image of 16-bit parts (3xbf16: bf16 hi and lo images; fp16:
//    one), [b][row][col][channel'], the padding written as zeros and the stride folded into the
//    channels (space to depth): channel' (c, u, v) of image pixel (row, col) is
//    x[c][row * SH + u - PH][col * SW + v - PW]. The strided convolution of x is then a stride-1
//    one of TAPS_H x TAPS_W taps over the image (taps past the kernel weigh zero), and the taps of
//    one output pixel in one image row are TAPS_W * IMG_C contiguous values. The gathering
//    templates spend most of their time loading taps one by one; here a K step of a pixel is eight
//    16-byte copies.
// 2. conv_prepare lays the weight out in that K order (row, column, channel'), split like the
//    image, as the tensor cores read it (128-byte swizzled K-major rows).
// 3. conv_wgmma_image: a producer warpgroup copies each K step's 64 values of every pixel of the
//    block tile (eight 16-byte chunks, lanes along a pixel's chunks so a warp reads a few whole
//    lines) with cp.async into the swizzled stage, STAGES - 2 steps in flight, and streams the
//    weight tiles with bulk copies; {{WGS}} consumer warpgroup(s) of 64 pixels issue wgmma k16 from
//    shared memory: lo·hi + hi·lo + hi·hi (3xbf16) or hi·hi (fp16), {{STAGES}} stages in an mbarrier
//    ring, tensor-core sums promoted to fp32 registers every {{PROMOTE}} K steps.
// 4. With pooling, the conv result goes to scratch and pool_windows pools it (as in conv_wgmma).
// @problem {{PROBLEM}}
// @precision {{PRECISION}}
// @scratch img float32 ({{SPLIT}} / 2 + 1) * {{BATCH}} * {{IMG_H}} * {{IMG_W}} * {{IMG_C}} / 2 uninitialized
// @scratch wtiles float32 ({{SPLIT}} / 2 + 1) * cdiv({{OUT_C}}, {{BN}}) * {{BN}} * cdiv({{IMAGE_K}}, 64) * 32 uninitialized
{{#POOL}}
// @scratch act float32 {{BATCH}} * {{OUT_C}} * {{OUT_H}} * {{OUT_W}} uninitialized
{{/POOL}}
// @launch conv_image grid(cdiv({{BATCH}} * {{IMG_H}} * {{IMG_W}} * {{IMG_C}} / 8, 256)) block(256) args({{X}}, img)
// @launch conv_prepare grid(cdiv(cdiv({{OUT_C}}, {{BN}}) * {{BN}} * cdiv({{IMAGE_K}}, 64) * 4, 256)) block(256) args({{WEIGHT}}, wtiles)
// @launch conv_wgmma_image grid(cdiv({{BATCH}} * {{OUT_H}} * {{OUT_W}}, 64 * {{WGS}}), cdiv({{OUT_C}}, {{BN}})) block(128 * ({{WGS}} + 1)) smem({{STAGES}} * ({{SPLIT}} / 2 + 1) * (64 * {{WGS}} + {{BN}}) * 128 + 2048) args(img, wtiles, {{CONV_OUT}}{{EPILOGUE_ARGS}})
{{#POOL}}
// @launch pool_windows grid(cdiv({{BATCH}} * {{OUT_C}} * {{POOL_OUT_H}} * {{POOL_OUT_W}}, 256)) block(256) args(act, {{OUT}})
{{/POOL}}

{{>operand_parts}}

// ---- problem sizes and tile shapes ----
{{>conv_sizes}}
{{>conv_taps}}
// Plain convolutions only: the shared parts name a transposed one's phases (one here).
constexpr bool kTransposed = false;
{{>conv_phases}}

// The image: TAPS_H x TAPS_W taps of stride 1 over IMG_C channels' (IMG_C a multiple of 8, so a
// 16-byte chunk never spans two pixels).
constexpr int kTapsH = {{TAPS_H}}, kTapsW = {{TAPS_W}};
constexpr int kImgH = {{IMG_H}}, kImgW = {{IMG_W}}, kImgC = {{IMG_C}};
{{>conv_image_taps}}

constexpr int kWGs = {{WGS}};                            // consumer warpgroups, 64 pixels each
constexpr bool kBf16 = {{BF16}};                         // bf16 parts (else fp16)
constexpr bool kHalf = true;                             // 16-bit operands, as the consumers name them
using Elem = OperandType<kHalf, kBf16>::Type;           // one value of a tile
constexpr int kBM = 64 * kWGs, kBN = {{BN}};             // block tile
constexpr int kBK = 128 / sizeof(Elem);                  // taps per K step: one 128-byte row
constexpr int kStages = {{STAGES}};
// K steps whose copies stay in flight once a step is issued. The consumers release a stage only
// after issuing the next step's products (a stage is held one step longer than it is read), so the
// producer may keep at most kStages - 2 steps unannounced: with one more, it would wait for a
// stage that the consumers free only after a step it has not yet announced.
constexpr int kAhead = kStages - 2;
constexpr int kPromote = {{PROMOTE}};                    // K steps per tensor-core accumulation chunk
constexpr int kSplit = {{SPLIT}};                        // 3: 3xbf16, 1: fp16
constexpr int kParts = kSplit == 3 ? 2 : 1;

__host__ __device__ constexpr int cdiv(int a, int b) { return (a + b - 1) / b; }
constexpr int kTilesN = cdiv(kGemmN, kBN), kTilesK = cdiv(kImageK, kBK);
constexpr int kThreads = 128 * (kWGs + 1);

// Weight tiles in scratch: [part][tileN][tileK][BN][kBK], in Elem.
constexpr long long kTileB = (long long)kBN * kBK;
constexpr long long kPartB = (long long)kTilesN * kTilesK * kTileB;

// Shared memory: the ring, per stage the A parts, then the B parts (whole 1024-byte swizzle atoms).
constexpr int kStageBytesA = kParts * kBM * 128, kStageBytesB = kParts * kBN * 128;
constexpr int kStageBytes = kStageBytesA + kStageBytesB;
constexpr int kSmemBytes = kStages * kStageBytes + 2048;
// Two blocks per SM where their rings fit and 256 threads leave each 128 registers: enough for
// an accumulator of up to 128 channels, or for one of 64 and its fp32 sum (a K longer than one
// chunk; ptxas spilled 96 channels of both).
constexpr int kMinBlocks =
    2 * kSmemBytes <= {{SMEM_PER_SM}} - 2048 && kThreads <= 256 && (kPromote >= kTilesK || kBN <= 64) ? 2 : 1;

static_assert(kWGs == 1 || kWGs == 2, "one or two consumer warpgroups");
static_assert(kImgC % 8 == 0 && kImgC >= kFolded, "whole 16-byte chunks of channels'");
static_assert(kTapsH * kStrideH >= kKH && kTapsW * kStrideW >= kKW, "the image taps cover the kernel");
static_assert(kDilH == 1 && kDilW == 1 && !kDeep, "2-D or 1-D, undilated");
static_assert(kImgH == kOutH + kTapsH - 1 && kImgW == kOutW + kTapsW - 1, "every window inside the image");
static_assert(kImgPart < (1LL << 31), "image offsets are 32-bit");
static_assert(kBN == 64 || kBN == 96 || kBN == 128, "wgmma tiles of 64, 96 or 128 channels");
static_assert(kSplit == 3 ? kBf16 : (kSplit == 1 && !kBf16), "3xbf16, or a single fp16 pass");
static_assert(kStages >= 2 && kPromote >= 1, "at least two stages");
static_assert(kSmemBytes <= {{SMEM_PER_BLOCK}}, "the ring must fit in shared memory");

// ---- 1. the image ----
extern "C" __global__ void __launch_bounds__(256)
conv_image(const float *__restrict__ x, float *__restrict__ img)
{
    // One thread per 8 channels' of one image pixel; neighbouring threads take neighbouring
    // columns, so a warp's loads of one channel' are runs of an x row.
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= kImgPart / 8) return;
    const int col = idx % kImgW;
    const long long rest = idx / kImgW;
    const int chunk = rest % (kImgC / 8);
    const int row = (rest / (kImgC / 8)) % kImgH;
    const int b = rest / ((long long)(kImgC / 8) * kImgH);
    float hi[8], lo[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) {
        const long long from = image_source(b, row, col, chunk * 8 + e);
        split_value<Elem>(from >= 0 ? __ldg(x + from) : 0.0f, hi[e], lo[e]);
    }
    Elem *dst = reinterpret_cast<Elem *>(img) + (((long long)b * kImgH + row) * kImgW + col) * kImgC + chunk * 8;
    *reinterpret_cast<float4 *>(dst) = pack16<Elem>(hi);
    if constexpr (kParts == 2) *reinterpret_cast<float4 *>(dst + kImgPart) = pack16<Elem>(lo);
}

// ---- 2. weight tiles, in the image's K order ----
__device__ __forceinline__ float tile_weight(const float *__restrict__ w, int n, int k, const Phase &)
{
    const long long from = image_weight(n, k);
    return from >= 0 ? __ldg(w + from) : 0.0f;
}
{{>conv_weight_tiles}}

// ---- 3. the convolution ----

{{>hopper_pipeline}}
{{>cp_async_zfill}}
{{>stage_b_copy}}

{{>wgmma_smem}}

// A 16-byte copy into shared memory kept in L1 on the way (neighbouring pixels' runs overlap, and
// the next K steps of a pixel read the rest of its lines); `inside` false zero-fills it.
__device__ __forceinline__ void copy_chunk(void *dst, const Elem *src, bool inside)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src),
                 "r"(inside ? 16 : 0)
                 : "memory");
}

extern "C" __global__ void __launch_bounds__(kThreads, kMinBlocks)
conv_wgmma_image(const float *__restrict__ img, const float *__restrict__ wtiles, float *__restrict__ out{{EPILOGUE_PARAMS}})
{
    extern __shared__ unsigned char smemRaw[];
    // The swizzle pattern follows address bits, so the ring starts on a 1024-byte boundary.
    unsigned char *ring = smemRaw + ((1024 - smem_addr(smemRaw) % 1024) % 1024);
    unsigned long long *full = reinterpret_cast<unsigned long long *>(ring + kStages * kStageBytes);
    unsigned long long *empty = full + kStages;

    const int m0 = blockIdx.x * kBM, tileN = blockIdx.y, n0 = tileN * kBN;
    const Phase f = phase_of(0);

    if (threadIdx.x == 0) {
        for (int s = 0; s < kStages; ++s) {
            mbar_init(&full[s], 128 + 1); // every copying thread, plus the weight copies' expect_tx
            mbar_init(&empty[s], kWGs);
        }
        mbar_init_fence();
    }
    __syncthreads();

    if (threadIdx.x < 128) {
        // The producer warpgroup: thread t copies chunk t % 8 of the K step for pixels
        // t / 8 + 16 i of the tile; each pixel's offset in the image (-1 past M) is kept.
        constexpr int kRows = kBM / 16;
        const int q = threadIdx.x % 8, first = threadIdx.x / 8;
        int base[kRows];
#pragma unroll
        for (int i = 0; i < kRows; ++i) base[i] = image_corner(m0 + first + 16 * i);
        const Elem *image = reinterpret_cast<const Elem *>(img);
        const Elem *wBase = reinterpret_cast<const Elem *>(wtiles) + (long long)tileN * kTilesK * kTileB;
        for (int kt = 0; kt < kTilesK; ++kt) {
            const int s = kt % kStages;
            unsigned char *stage = stage_with_b(ring, full, empty, kt, wBase);
            // This chunk's 8 taps: a piece of one run of the window.
            const int k = (kt * 8 + q) * 8;
            const bool inK = k < kImageK;
            const int offset = inK ? image_tap(k) : 0;
#pragma unroll
            for (int i = 0; i < kRows; ++i) {
                const int row = first + 16 * i;
                const bool inside = inK && base[i] >= 0;
                const Elem *src = image + (inside ? base[i] + offset : 0);
                unsigned char *dst = stage + row * 128 + ((q ^ (row & 7)) * 16);
#pragma unroll
                for (int part = 0; part < kParts; ++part)
                    copy_chunk(dst + part * kBM * 128, src + part * kImgPart, inside);
            }
            cp_async_commit();
            // Step kt - kAhead has landed: make it visible to the tensor cores' (async) reads,
            // then count this thread in.
            if (kt >= kAhead) {
                cp_async_wait<kAhead>();
                fence_proxy_async();
                mbar_arrive(&full[(kt - kAhead) % kStages]);
            }
        }
        cp_async_wait<0>();
        fence_proxy_async();
        for (int kt = kTilesK > kAhead ? kTilesK - kAhead : 0; kt < kTilesK; ++kt) mbar_arrive(&full[kt % kStages]);
        return;
    }

    // Consumers: warpgroup c owns pixels 64c .. 64c+63 of the block tile.
    const int c = threadIdx.x / 128 - 1;
    const int steps = kTilesK; // every block runs all of K
{{>wgmma_consumer}}

{{>conv_wgmma_store}}
}

// ---- 4. pooling of the conv result (pooling problems only) ----
{{>conv_pool}}
