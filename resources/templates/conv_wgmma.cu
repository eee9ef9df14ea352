// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// Conv2D as an implicit GEMM on Hopper's warpgroup tensor cores (wgmma), with its epilogue fused
// and, when the problem pools, a max-pooling pass after it.
//   x [{{BATCH}}, {{IN_C}}, {{IN_H}}, {{IN_W}}] (*) weight [{{OUT_C}}, {{IN_C}}, {{KH}}, {{KW}}], stride {{STRIDE_H}}x{{STRIDE_W}},
//   padding {{PAD_H}}x{{PAD_W}}, dilation {{DIL_H}}x{{DIL_W}} -> [{{BATCH}}, {{OUT_C}}, {{OUT_H}}, {{OUT_W}}], the epilogue (bias, ReLU, ...),
//   then (pooling {{POOL_KH}}x{{POOL_KW}} > 0) max pooling, stride {{POOL_SH}}x{{POOL_SW}}, padding {{POOL_PAD_H}}x{{POOL_PAD_W}}
//   -> [{{BATCH}}, {{OUT_C}}, {{POOL_OUT_H}}, {{POOL_OUT_W}}].
// GEMM view: M = output pixels, N = output channels, Kdim = C*KH*KW taps.
// 1. conv_prepare splits the weight (a [N][Kdim] matrix, already K-major) into TF32 high and low
//    parts laid out as the tensor cores read them (128-byte swizzled rows, zero-padded tiles).
// 2. conv_wgmma: {{PRODUCERS}} producer warpgroup(s) gather the im2col tile of each 32-deep K step straight
//    from x ({{PRODUCERS}} warpgroup(s), one output pixel per thread or two, tap offsets from a shared table; the next step's loads
//    are in flight while this step is stored), splits every value into hi + lo as it stores it
//    (swizzled), and one of its threads streams the matching weight tiles with bulk copies;
//    {{WGS}} consumer warpgroup(s) of 64 pixels issue wgmma.m64n{{BN}}k8 from shared memory:
//    lo·hi + hi·lo + hi·hi (3xTF32, fp32-accurate) or hi·hi (TF32), {{STAGES}} stages in a ring
//    guarded by mbarriers. Tensor-core accumulation truncates, so it runs {{PROMOTE}} K steps at a
//    time before each chunk is added to an fp32 register sum.
// 3. With pooling, the conv result goes to scratch and max_pool reads each window from there:
//    pooling inside the conv tile would split most windows between blocks (a tile is a run of
//    pixels, not of whole rows) and combine them with global atomics, which cost more than one
//    extra pass over the conv output.
// @problem {{PROBLEM}}
// @precision {{PRECISION}}
// @scratch wtiles float32 ({{SPLIT}} / 2 + 1) * cdiv({{OUT_C}}, {{BN}}) * {{BN}} * cdiv({{IN_C}} * {{KH}} * {{KW}}, 32) * 32 uninitialized
{{#POOL}}
// @scratch act float32 {{BATCH}} * {{OUT_C}} * {{OUT_H}} * {{OUT_W}} uninitialized
{{/POOL}}
// @launch conv_prepare grid(cdiv(cdiv({{OUT_C}}, {{BN}}) * {{BN}} * cdiv({{IN_C}} * {{KH}} * {{KW}}, 32) * 4, 256)) block(256) args({{WEIGHT}}, wtiles)
// @launch conv_wgmma grid(cdiv({{BATCH}} * {{OUT_H}} * {{OUT_W}}, 64 * {{WGS}}), cdiv({{OUT_C}}, {{BN}})) block(128 * ({{WGS}} + {{PRODUCERS}})) smem({{STAGES}} * ({{SPLIT}} / 2 + 1) * (64 * {{WGS}} + {{BN}}) * 128 + cdiv({{IN_C}} * {{KH}} * {{KW}}, 32) * 32 * 8 + 2048) args({{X}}, wtiles, {{CONV_OUT}}{{EPILOGUE_ARGS}})
{{#POOL}}
// @launch max_pool grid(cdiv({{BATCH}} * {{OUT_C}} * {{POOL_OUT_H}} * {{POOL_OUT_W}}, 256)) block(256) args(act, {{OUT}})
{{/POOL}}

// ---- problem sizes and tile shapes ----
constexpr int kBatch = {{BATCH}}, kInC = {{IN_C}}, kInH = {{IN_H}}, kInW = {{IN_W}};
constexpr int kOutC = {{OUT_C}}, kKH = {{KH}}, kKW = {{KW}};
constexpr int kStrideH = {{STRIDE_H}}, kStrideW = {{STRIDE_W}}, kPadH = {{PAD_H}}, kPadW = {{PAD_W}};
constexpr int kDilH = {{DIL_H}}, kDilW = {{DIL_W}};
constexpr int kOutH = {{OUT_H}}, kOutW = {{OUT_W}};
constexpr int kPoolKH = {{POOL_KH}}, kPoolKW = {{POOL_KW}}, kPoolSH = {{POOL_SH}}, kPoolSW = {{POOL_SW}};
constexpr int kPoolPadH = {{POOL_PAD_H}}, kPoolPadW = {{POOL_PAD_W}};
constexpr int kPoolOutH = {{POOL_OUT_H}}, kPoolOutW = {{POOL_OUT_W}};
constexpr bool kPool = kPoolKH > 0;

constexpr int kPixels = kOutH * kOutW;
constexpr int kGemmM = kBatch * kPixels;   // output pixels
constexpr int kGemmN = kOutC;              // output channels
constexpr int kGemmK = kInC * kKH * kKW;   // taps

constexpr int kWGs = {{WGS}};                            // consumer warpgroups, 64 pixels each
constexpr int kBM = 64 * kWGs, kBN = {{BN}}, kBK = 32;  // block tile; 32 floats = one 128-byte row
constexpr int kStages = {{STAGES}};
constexpr int kPromote = {{PROMOTE}};                    // K steps per tensor-core accumulation chunk
constexpr int kSplit = {{SPLIT}};                        // 3: 3xTF32, 1: TF32
constexpr int kParts = kSplit == 3 ? 2 : 1;

__host__ __device__ constexpr int cdiv(int a, int b) { return (a + b - 1) / b; }
constexpr int kTilesN = cdiv(kGemmN, kBN), kTilesK = cdiv(kGemmK, kBK);
constexpr int kKPadded = kTilesK * kBK;
constexpr int kProducers = {{PRODUCERS}};                 // gathering warpgroups
constexpr int kThreads = 128 * (kWGs + kProducers);

// Weight tiles in scratch: [part][tileN][tileK][BN][32].
constexpr long long kTileB = (long long)kBN * kBK;
constexpr long long kPartB = (long long)kTilesN * kTilesK * kTileB;

// Shared memory: the ring (per stage the A parts, then the B parts; every tile a whole number of
// 1024-byte swizzle atoms), then the tap table.
constexpr int kStageBytesA = kParts * kBM * kBK * 4, kStageBytesB = kParts * kBN * kBK * 4;
constexpr int kStageBytes = kStageBytesA + kStageBytesB;

// The producer warpgroups: 128 * PRODUCERS / BM threads per pixel, each gathering a share of the
// 32 taps of a step.
constexpr int kThreadsPerRow = 128 * kProducers / kBM;
constexpr int kTapsPerThread = kBK / kThreadsPerRow;

// A tap past Kdim, or a pixel past M, gets a shift that fails the bounds check: it reads as 0.
constexpr int kOutside = 0x4000;

// Two blocks per SM where their shared memory fits and each thread keeps at least 85 registers
// (registers are capped to allow the second block): enough for 16 taps in flight and one
// accumulator of up to 96 channels, not for 32 taps, 128 channels or a separate fp32 sum (a K
// longer than one chunk).
constexpr int kSmemBytes = kStages * kStageBytes + kKPadded * 8 + 2048;
constexpr int kMinBlocks =
    2 * kSmemBytes <= 233472 - 2048 && kThreads <= 384 && kTapsPerThread <= 16 && kBN <= 96 && kPromote >= kTilesK ? 2
                                                                                                                : 1;

static_assert(kWGs == 1 || kWGs == 2, "one or two consumer warpgroups");
static_assert(kProducers == 1 || kProducers == 2, "one or two producer warpgroups");
static_assert(kThreadsPerRow >= 1 && kThreadsPerRow <= 8 && kTapsPerThread % 4 == 0, "whole 16-byte chunks per thread");
static_assert(kBN == 64 || kBN == 96 || kBN == 128, "wgmma tiles of 64, 96 or 128 channels");
static_assert(kSplit == 1 || kSplit == 3, "split 1 (TF32) or 3 (3xTF32)");
static_assert(kStages >= 2 && kPromote >= 1, "at least two stages");
static_assert(kStages * kStageBytes + kKPadded * 8 + 2048 <= 232448, "the ring must fit in shared memory");
static_assert((long long)kBatch * kInC * kInH * kInW < (1LL << 31), "x offsets are 32-bit");
static_assert((kKH - 1) * kDilH < kOutside && (kKW - 1) * kDilW < kOutside && kInH < kOutside && kInW < kOutside,
              "sizes must fit the packed (r, s) shifts");

__device__ __forceinline__ float to_tf32(float x)
{
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return __uint_as_float(r);
}

// ---- 1. weight tiles ----
extern "C" __global__ void __launch_bounds__(256)
conv_prepare(const float *__restrict__ w, float *__restrict__ wtiles)
{
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    // One thread per 8 consecutive taps of one weight row: chunks 2c and 2c+1 share an aligned
    // 32-byte pair of slots under the swizzle.
    if (idx >= (long long)kTilesN * kBN * kTilesK * 4) return;
    const int pair = idx % 4, tk = (idx / 4) % kTilesK, n = idx / (4 * kTilesK);
    const int k0 = tk * kBK + pair * 8;
    float hi[8], lo[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const float v = (n < kGemmN && k0 + i < kGemmK) ? __ldg(w + (long long)n * kGemmK + k0 + i) : 0.0f;
        hi[i] = to_tf32(v);
        lo[i] = to_tf32(v - hi[i]);
    }
    const int row = n % kBN;
    const int first = (2 * pair) ^ (row & 7), second = first ^ 1;
    float *dst = wtiles + ((long long)(n / kBN) * kTilesK + tk) * kTileB + (long long)row * kBK;
    reinterpret_cast<float4 *>(dst)[first] = make_float4(hi[0], hi[1], hi[2], hi[3]);
    reinterpret_cast<float4 *>(dst)[second] = make_float4(hi[4], hi[5], hi[6], hi[7]);
    if constexpr (kParts == 2) {
        dst += kPartB;
        reinterpret_cast<float4 *>(dst)[first] = make_float4(lo[0], lo[1], lo[2], lo[3]);
        reinterpret_cast<float4 *>(dst)[second] = make_float4(lo[4], lo[5], lo[6], lo[7]);
    }
}

// ---- 2. the convolution ----

__device__ __forceinline__ unsigned smem_addr(const void *p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ void mbar_init(unsigned long long *bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count));
}
__device__ __forceinline__ void mbar_expect_tx(unsigned long long *bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned long long *bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void mbar_wait(unsigned long long *bar, unsigned parity)
{
    asm volatile("{\n.reg .pred done;\nwait:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra wait;\n}\n" ::"r"(smem_addr(bar)), "r"(parity) : "memory");
}

// A bulk copy of `bytes` contiguous bytes from global to shared memory, counted on `bar`.
__device__ __forceinline__ void bulk_copy(void *dst, const float *src, unsigned bytes, unsigned long long *bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n"
                 ::"r"(smem_addr(dst)), "l"(src), "r"(bytes), "r"(smem_addr(bar)) : "memory");
}

// The descriptor of a K-major tile of 128-byte swizzled rows: rows 8 apart are 1024 bytes apart
// (stride byte offset); the leading byte offset is unused with a 128-byte swizzle.
__device__ __forceinline__ unsigned long long tile_desc(const void *tile)
{
    const unsigned long long addr = smem_addr(tile);
    return ((addr & 0x3FFFF) >> 4) | (1ull << 16) | ((1024ull >> 4) << 32) | (1ull << 62);
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Pins the accumulators in place around asynchronous products, so the compiler neither copies
// them nor touches them while a product is in flight.
template <int kRegs>
__device__ __forceinline__ void fence_operands(float (&d)[kRegs])
{
#pragma unroll
    for (int i = 0; i < kRegs; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
template <int kPending>
__device__ __forceinline__ void wgmma_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory"); }

// d (64 x kN, fp32) = [d +] A (64 x 8) · B (8 x kN), both TF32 from shared memory.
__device__ __forceinline__ void wgmma_tf32(float (&d)[kBN / 2], unsigned long long descA, unsigned long long descB, int scaleD)
{
    // One instruction per tile width: the accumulator list is part of the instruction.
    constexpr int kN = kBN;
    if constexpr (kN == 64)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {"
                     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
                     "}, %32, %33, p, 1, 1;\n}\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                       "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
                       "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                       "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                     : "l"(descA), "l"(descB), "r"(scaleD));
    else if constexpr (kN == 96)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %50, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n96k8.f32.tf32.tf32 {"
                     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                     "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47"
                     "}, %48, %49, p, 1, 1;\n}\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                       "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
                       "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                       "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
                       "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
                       "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47])
                     : "l"(descA), "l"(descB), "r"(scaleD));
    else if constexpr (kN == 128)
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {"
                     "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                     "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                     "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
                     "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
                     "}, %64, %65, p, 1, 1;\n}\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                       "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
                       "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                       "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
                       "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
                       "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
                       "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
                       "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                     : "l"(descA), "l"(descB), "r"(scaleD));
}


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

    // Tap k = (c, r, s): offset of x[., c, r*dil, s*dil] from a window's corner, and the packed shift.
    for (int k = threadIdx.x; k < kKPadded; k += kThreads) {
        int2 e = make_int2(0, kOutside << 16);
        if (k < kGemmK) {
            const int c = k / (kKH * kKW), r = (k / kKW) % kKH, s = k % kKW;
            e = make_int2((c * kInH + r * kDilH) * kInW + s * kDilW, (r * kDilH) << 16 | (s * kDilW));
        }
        taps[k] = e;
    }
    if (threadIdx.x == 0) {
        for (int s = 0; s < kStages; ++s) {
            mbar_init(&full[s], 128 * kProducers + 1); // every gathering thread, plus the weight copies' expect_tx
            mbar_init(&empty[s], kWGs);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    const int wg = threadIdx.x / 128;
    if (wg < kProducers) {
        // Producer warpgroups: thread i gathers pixel m0 + i % BM, taps part i / BM of each step.
        const int row = threadIdx.x % kBM, part = threadIdx.x / kBM;
        const int m = m0 + row;
        int corner = 0, ih0 = -2 * kOutside, iw0 = -2 * kOutside; // a pixel past M reads zeros
        if (m < kGemmM) {
            const int b = m / kPixels, p = m % kPixels;
            ih0 = (p / kOutW) * kStrideH - kPadH;
            iw0 = (p % kOutW) * kStrideW - kPadW;
            corner = b * kInC * kInH * kInW + ih0 * kInW + iw0;
        }
        const float *wBase = wtiles + (long long)tileN * kTilesK * kTileB;
        // The taps of step kt for this thread; their loads are issued one step ahead.
        const auto gather = [&](int kt, float (&v)[kTapsPerThread]) {
            const int tap0 = kt * kBK + part * kTapsPerThread;
#pragma unroll
            for (int j = 0; j < kTapsPerThread; ++j) {
                const int2 tap = taps[tap0 + j];
                const bool inside = (unsigned)(ih0 + (tap.y >> 16)) < (unsigned)kInH &&
                                    (unsigned)(iw0 + (tap.y & 0xffff)) < (unsigned)kInW;
                v[j] = inside ? __ldg(x + corner + tap.x) : 0.0f;
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
            if (kt >= kStages) mbar_wait(&empty[s], ((kt / kStages) - 1) & 1);
            unsigned char *stage = ring + s * kStageBytes;
            if (threadIdx.x == 0) {
                mbar_expect_tx(&full[s], kStageBytesB);
#pragma unroll
                for (int q = 0; q < kParts; ++q)
                    bulk_copy(stage + kStageBytesA + q * kBN * kBK * 4, wBase + q * kPartB + kt * kTileB,
                              kBN * kBK * 4, &full[s]);
            }
            // Split and store, 4 taps = one 16-byte chunk.
            float4 *rowHi = reinterpret_cast<float4 *>(stage + row * kBK * 4);
#pragma unroll
            for (int j = 0; j < kTapsPerThread; j += 4) {
                const int slot = ((part * kTapsPerThread + j) / 4) ^ (row & 7);
                float hi[4], lo[4];
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    hi[e] = to_tf32(v[j + e]);
                    lo[e] = to_tf32(v[j + e] - hi[e]);
                }
                rowHi[slot] = make_float4(hi[0], hi[1], hi[2], hi[3]);
                if constexpr (kParts == 2)
                    rowHi[kBM * kBK / 4 + slot] = make_float4(lo[0], lo[1], lo[2], lo[3]);
            }
            // Make the stores visible to the tensor cores' (async) reads, then count this thread in.
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
            mbar_arrive(&full[s]);
        }
        return;
    }

    // Consumers: warpgroup c owns pixels 64c .. 64c+63 of the block tile.
    const int c = wg - kProducers;
    float acc[kBN / 2], sum[kBN / 2];
#pragma unroll
    for (int i = 0; i < kBN / 2; ++i) acc[i] = sum[i] = 0.0f;

    // Waits for K step kt's tiles and issues its products (asynchronously); `fresh` starts a chunk.
    const auto issue = [&](int kt, bool fresh) {
        const int s = kt % kStages;
        mbar_wait(&full[s], (kt / kStages) & 1);
        const unsigned char *stage = ring + s * kStageBytes;
        const unsigned long long aHi = tile_desc(stage + c * 64 * kBK * 4);
        const unsigned long long bHi = tile_desc(stage + kStageBytesA);
        const unsigned long long aLo = aHi + ((kBM * kBK * 4) >> 4); // the next part, same layout
        const unsigned long long bLo = bHi + ((kBN * kBK * 4) >> 4);
        fence_operands(acc);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kBK / 8; ++kk) {
            // 8 floats = 32 bytes further along the (swizzled) rows: +2 in the 16-byte address field.
            const unsigned long long step = 2 * kk;
            const int keep = !(fresh && kk == 0); // the chunk's first product overwrites the accumulator
            if constexpr (kSplit == 3) {
                // Small terms first, so they are not lost against the large running sum.
                wgmma_tf32(acc, aLo + step, bHi + step, keep);
                wgmma_tf32(acc, aHi + step, bLo + step, 1);
                wgmma_tf32(acc, aHi + step, bHi + step, 1);
            } else {
                wgmma_tf32(acc, aHi + step, bHi + step, keep);
            }
        }
        wgmma_commit();
        fence_operands(acc);
    };
    const auto release = [&](int kt) {
        if (threadIdx.x % 128 == 0) mbar_arrive(&empty[kt % kStages]);
    };

    // Every loop head sees the same number of product groups in flight (one in the inner loop,
    // none in the outer), so the compiler needs no extra waits to track the accumulators.
    for (int k0 = 0; k0 < kTilesK; k0 += kPromote) {
        const int kEnd = min(k0 + kPromote, kTilesK);
        issue(k0, true);
        for (int kt = k0 + 1; kt < kEnd; ++kt) {
            issue(kt, false);
            wgmma_wait<1>(); // step kt-1 is done: its stage can be refilled
            release(kt - 1);
        }
        wgmma_wait<0>();
        release(kEnd - 1);
        fence_operands(acc);
#pragma unroll
        for (int i = 0; i < kBN / 2; ++i) sum[i] += acc[i];
    }

    // Epilogue: a function of acc, row (the output pixel m) and col (the output channel). Register
    // 4j + r of a thread sits at pixel 16 * warp + lane / 4 (+8 for r >= 2) of its warpgroup and
    // channel 8j + 2 * (lane % 4) (+1 for odd r).
    const auto epilogue = [&](float acc, int row, int col) -> float { return {{EPILOGUE}}; };
    const int lane = threadIdx.x % 32, warp = (threadIdx.x % 128) / 32;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int m = m0 + c * 64 + warp * 16 + lane / 4 + 8 * h;
        if (m >= kGemmM) continue;
        float *dst = out + (long long)(m / kPixels) * kGemmN * kPixels + m % kPixels;
#pragma unroll
        for (int j = 0; j < kBN / 8; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const int ch = n0 + 8 * j + 2 * (lane % 4) + e;
                if (ch < kGemmN) dst[(long long)ch * kPixels] = epilogue(sum[4 * j + 2 * h + e], m, ch);
            }
    }
}

// ---- 3. max pooling of the conv result (pooling problems only) ----
// One thread per pooled output; consecutive threads take consecutive outputs of a row, so the
// window reads of a warp cover a few contiguous stretches of the conv rows.
extern "C" __global__ void __launch_bounds__(256)
max_pool(const float *__restrict__ act, float *__restrict__ out)
{
    constexpr long long kCount = (long long)kBatch * kOutC * kPoolOutH * kPoolOutW;
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (!kPool || idx >= kCount) return;
    const int pw = idx % kPoolOutW, ph = (idx / kPoolOutW) % kPoolOutH;
    const long long plane = idx / ((long long)kPoolOutW * kPoolOutH); // b * OUT_C + channel
    const float *src = act + plane * kPixels;
    float v = -__int_as_float(0x7f800000); // -inf: padding never wins
#pragma unroll
    for (int kh = 0; kh < (kPool ? kPoolKH : 1); ++kh)
#pragma unroll
        for (int kw = 0; kw < (kPool ? kPoolKW : 1); ++kw) {
            const int oh = ph * kPoolSH - kPoolPadH + kh, ow = pw * kPoolSW - kPoolPadW + kw;
            if (oh >= 0 && oh < kOutH && ow >= 0 && ow < kOutW) v = fmaxf(v, __ldg(src + oh * kOutW + ow));
        }
    out[idx] = v;
}
