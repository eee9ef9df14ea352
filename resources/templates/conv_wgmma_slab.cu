// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// Conv2D (or 1-D) as an implicit GEMM on Hopper's warpgroup tensor cores (wgmma) whose im2col
// operand is read from a slab of the input held in shared memory, not gathered from global memory.
//   x [{{BATCH}}, {{IN_C}}, {{IN_H}}, {{IN_W}}] (*) weight [{{OUT_C}}, {{IN_C}}, {{KH}}, {{KW}}], stride {{STRIDE_H}}x{{STRIDE_W}},
//   padding {{PAD_H}}x{{PAD_W}}, dilation {{DIL_H}}x{{DIL_W}} -> [{{BATCH}}, {{OUT_C}}, {{OUT_H}}, {{OUT_W}}], the epilogue (bias, ReLU, ...),
//   then (pooling {{POOL_KH}}x{{POOL_KW}} > 0) max or average pooling, stride {{POOL_SH}}x{{POOL_SW}}, padding {{POOL_PAD_H}}x{{POOL_PAD_W}}
//   -> [{{BATCH}}, {{OUT_C}}, {{POOL_OUT_H}}, {{POOL_OUT_W}}].
// Why a slab: the gathering templates wait on global-memory latency for every tap of every pixel
// (Nsight Compute: a warp ready to issue on a third of the cycles), and neighbouring pixels' windows
// overlap (11x11 taps at stride 4 read each input value about 7 times). Here every input value of a
// tile's windows crosses from memory once, as whole 16-byte runs, and the taps are then read from
// shared memory, a few cycles away.
// 1. conv_prepare splits the weight into 16-bit parts laid out as the tensor cores read them
//    (128-byte swizzled K-major rows of 64 taps; 3xbf16: bf16 hi and lo, fp16: one part).
// 2. conv_wgmma_slab: a persistent grid ({{GRID}} blocks); each block copies all of the weight
//    tiles into shared memory once (bulk copies, one mbarrier), then each of its {{WGS}} warpgroups
//    walks its own tiles of {{TILE_H}} x {{TILE_W}} output pixels of one image (64 GEMM rows): it
//    copies the slab of x those windows cover (every channel, the padding zero-filled) with
//    cp.async, then for each 16-tap slice each thread reads the 8 values of its wgmma A fragment
//    from the slab through a table of tap offsets, rounds them to 16 bits in registers (3xbf16:
//    hi + lo) and issues wgmma.m64n{{BN}}k16 with A from registers: lo·hi + hi·lo + hi·hi
//    (3xbf16, about fp32 accuracy) or one fp16 pass (loose policy). The next slice's fragment is
//    read while the tensor cores multiply this one. The warpgroups of a block work on different
//    tiles, so one copies its slab while another multiplies; with {{SLABS}} = 2 slabs a warpgroup
//    also copies its next tile's slab while it multiplies this one's.
// 3. The bias and epilogue apply to the fp32 sums, stored into NCHW; with pooling the conv result
//    goes to scratch and pool_windows pools it.
// @problem {{PROBLEM}}
// @precision {{PRECISION}}
// @scratch wtiles float32 ({{SPLIT}} / 2 + 1) * cdiv({{OUT_C}}, {{BN}}) * {{BN}} * cdiv({{TAPS_K}}, 64) * 32 uninitialized
{{#POOL}}
// @scratch act float32 {{BATCH}} * {{OUT_C}} * {{OUT_H}} * {{OUT_W}} uninitialized
{{/POOL}}
// @launch conv_prepare grid(cdiv(cdiv({{OUT_C}}, {{BN}}) * {{BN}} * cdiv({{TAPS_K}}, 64) * 4, 256)) block(256) args({{WEIGHT}}, wtiles)
// @launch conv_wgmma_slab grid({{GRID}}) block(128 * {{WGS}}) smem({{SMEM}}) args({{X}}, wtiles, {{CONV_OUT}}{{EPILOGUE_ARGS}})
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

constexpr int kWGs = {{WGS}};                           // warpgroups per block, each on its own tiles
constexpr int kSplit = {{SPLIT}};                       // 3: 3xbf16, 1: fp16
constexpr int kParts = kSplit == 3 ? 2 : 1;
using Elem = OperandType<true, kSplit == 3>::Type;      // a weight tile's values
constexpr int kBN = {{BN}}, kBK = 64;                   // channels per product; taps per 128-byte row
constexpr int kThreads = 128 * kWGs;

__host__ __device__ constexpr int cdiv(int a, int b) { return (a + b - 1) / b; }
constexpr int kTilesN = cdiv(kGemmN, kBN), kTilesK = cdiv(kGemmK, kBK);
constexpr int kSlices = cdiv(kGemmK, 16);               // k16 products per N tile
constexpr bool kRaggedK = kGemmK % 16 != 0;             // the last slice runs past K

// Weight tiles in scratch and in shared memory: [part][tileN][tileK][BN][kBK], in Elem.
constexpr long long kTileB = (long long)kBN * kBK;
constexpr long long kPartB = (long long)kTilesN * kTilesK * kTileB;
constexpr int kWeightBytes = int(kParts * kPartB * 2);

// A tile of output pixels: kTileH rows of kTileW pixels of one image, 64 GEMM rows at most.
constexpr int kTileH = {{TILE_H}}, kTileW = {{TILE_W}};
constexpr int kVec = {{VEC}};                           // floats a copy: 4 where x's rows are whole 16-byte chunks
{{>conv_slab_taps}}
constexpr int kSlabs = {{SLABS}};                      // slabs per warpgroup: 2 copies the next tile's ahead
constexpr int kSmemBytes = kWeightBytes + kWGs * kSlabs * kSlabFloats * 4 + kSlices * 64 + 16 + 1024;

static_assert(!kDeep && kKD == 1, "2-D or 1-D convolutions");
static_assert(kTileH * kTileW <= 64 && kTileH >= 1 && kTileW >= 1, "a tile is one warpgroup's 64 GEMM rows");
static_assert(kVec == 1 || (kVec == 4 && kInW % 4 == 0), "16-byte copies need whole chunks of x's rows");
static_assert(kBN == 16 || kBN == 32 || kBN == 64 || kBN == 96 || kBN == 128, "wgmma tiles of 16 to 128 channels");
static_assert(kSplit == 1 || kSplit == 3, "3xbf16 or a single fp16 pass");
static_assert(kWGs >= 1 && kWGs <= 4, "one to four warpgroups");
static_assert(kSlabs == 1 || kSlabs == 2, "one or two slabs a warpgroup");
static_assert(kSmemBytes == {{SMEM}} && kSmemBytes <= {{SMEM_PER_BLOCK}}, "the weights and slabs must fit in shared memory");

// ---- 1. weight tiles ----
{{>conv_tile_weight}}
{{>conv_weight_tiles}}

// ---- 2. the convolution ----

{{>hopper_pipeline}}
{{>cp_async_zfill}}
{{>wgmma_half_regs}}

__device__ __forceinline__ void warpgroup_sync(int id) { asm volatile("bar.sync %0, 128;\n" ::"r"(id) : "memory"); }

extern "C" __global__ void __launch_bounds__(kThreads, 1)
conv_wgmma_slab(const float *__restrict__ x, const float *__restrict__ wtiles, float *__restrict__ out{{EPILOGUE_PARAMS}})
{
    extern __shared__ unsigned char smemRaw[];
    // The swizzle pattern follows address bits, so the weight tiles start on a 1024-byte boundary.
    unsigned char *weights = smemRaw + ((1024 - smem_addr(smemRaw) % 1024) % 1024);
    float *slabs = reinterpret_cast<float *>(weights + kWeightBytes);
    int4 *taps = reinterpret_cast<int4 *>(slabs + kWGs * kSlabs * kSlabFloats);
    unsigned long long *ready = reinterpret_cast<unsigned long long *>(taps + kSlices * 4);

    // The tap table: entry (slice kk, quad q) holds the slab offsets of taps 16 kk + 2q + {0, 1, 8, 9},
    // the taps a thread of lane % 4 == q holds in that slice; a tap past K reads offset 0 (and is
    // zeroed where it is read).
    for (int i = threadIdx.x; i < kSlices * 4; i += kThreads) {
        int o[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) o[e] = slab_tap((i / 4) * 16 + 2 * (i % 4) + (e & 1) + 8 * (e >> 1));
        taps[i] = make_int4(o[0], o[1], o[2], o[3]);
    }
    if (threadIdx.x == 0) {
        mbar_init(ready, 1);
        mbar_init_fence();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        mbar_expect_tx(ready, kWeightBytes);
        constexpr int kPiece = 32768;
        for (int at = 0; at < kWeightBytes; at += kPiece)
            bulk_copy(weights + at, reinterpret_cast<const unsigned char *>(wtiles) + at, min(kPiece, kWeightBytes - at),
                      ready);
    }

    const int wg = threadIdx.x / 128, t = threadIdx.x % 128;
    const int lane = t % 32, warp = t / 32, q = lane % 4;
    const int stride = gridDim.x * kWGs;
    bool weightsIn = false;

    // Copies task's slab into `slab` (one cp.async group), the padding zero-filled.
    const auto copySlab = [&](int task, float *slab) {
        const SlabTile u = slab_tile(task);
        const float *xb = x + (long long)u.b * kInC * kInH * kInW;
        for (int i = t; i < kSlabChunks; i += 128) {
            const long long from = slab_chunk_source(i, u);
            cp_async<kVec * 4>(slab + i * kVec, from >= 0 ? xb + from : x, from >= 0);
        }
        cp_async_commit();
    };

    // With two slabs a warpgroup copies its next tile's while it multiplies this one's; with one,
    // the other warpgroups of the block keep the tensor cores busy while it copies.
    const int first = blockIdx.x * kWGs + wg;
    if (kSlabs == 2 && first < kTasks) copySlab(first, slabs + wg * kSlabs * kSlabFloats);
    for (int task = first, n = 0; task < kTasks; task += stride, ++n) {
        const SlabTile u = slab_tile(task);
        const int b = u.b, oh0 = u.oh0, ow0 = u.ow0;
        const float *slab = slabs + (wg * kSlabs + n % kSlabs) * kSlabFloats;
        // Every thread of the warpgroup is done reading the slab about to be refilled (each waited
        // for its own products).
        warpgroup_sync(1 + wg);
        if constexpr (kSlabs == 2) {
            if (task + stride < kTasks) {
                copySlab(task + stride, slabs + (wg * kSlabs + (n + 1) % kSlabs) * kSlabFloats);
                cp_async_wait<1>();
            } else {
                cp_async_wait<0>();
            }
        } else {
            copySlab(task, slabs + wg * kSlabFloats);
            cp_async_wait<0>();
        }
        warpgroup_sync(1 + wg);
        if (!weightsIn) {
            mbar_wait(ready, 0);
            weightsIn = true;
        }

        // This thread's fragment rows: tile pixels 16 warp + lane / 4 and 8 below. A row past the
        // tile reads the slab's start and is never stored.
        int base[2];
#pragma unroll
        for (int p = 0; p < 2; ++p) base[p] = max(0, slab_pixel(16 * warp + lane / 4 + 8 * p, u));
        // Slice kk's fragment: register r holds pixel r & 1 at taps 16 kk + 2q (+8 for r >= 2), +1.
        const auto load = [&](int kk, unsigned (&hi)[4], unsigned (&lo)[4]) {
            const int4 o = taps[kk * 4 + q];
            const int ko[4] = {o.x, o.y, o.z, o.w};
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                const int p = r & 1, j = r >> 1;
                float v0 = slab[base[p] + ko[2 * j]], v1 = slab[base[p] + ko[2 * j + 1]];
                if (kRaggedK && kk == kSlices - 1) {
                    const int k = 16 * kk + 2 * q + 8 * j;
                    v0 = k < kGemmK ? v0 : 0.0f;
                    v1 = k + 1 < kGemmK ? v1 : 0.0f;
                }
                split_pack<Elem, kParts == 2>(v0, v1, hi[r], lo[r]);
            }
        };

        for (int tileN = 0; tileN < kTilesN; ++tileN) {
            const int n0 = tileN * kBN;
            const unsigned char *wTile = weights + (long long)tileN * kTilesK * kTileB * 2;
            float acc[kBN / 2];
#pragma unroll
            for (int i = 0; i < kBN / 2; ++i) acc[i] = 0.0f;
            unsigned hi[2][4], lo[2][4];
            load(0, hi[0], lo[0]);
            // Two slices a pass, so that every register set is named by a constant.
            for (int k0 = 0; k0 < kSlices; k0 += 2) {
#pragma unroll
                for (int d = 0; d < 2; ++d) {
                    const int kk = k0 + d;
                    if (kk >= kSlices) break;
                    // 16 taps = 32 bytes further along the (swizzled) rows: +2 in the address field.
                    const unsigned long long bHi = tile_desc(wTile + (kk / 4) * kTileB * 2) + 2 * (kk % 4);
                    const unsigned long long bLo = bHi + ((kPartB * 2) >> 4); // the next part, same layout
                    fence_operands(acc);
                    wgmma_fence();
                    if constexpr (kParts == 2) {
                        // Small terms first, so they are not lost against the large running sum.
                        wgmma_half_regs<Elem>(acc, lo[d], bHi, kk > 0);
                        wgmma_half_regs<Elem>(acc, hi[d], bLo, 1);
                        wgmma_half_regs<Elem>(acc, hi[d], bHi, 1);
                    } else {
                        wgmma_half_regs<Elem>(acc, hi[d], bHi, kk > 0);
                    }
                    wgmma_commit();
                    // The products of slice kk - 1 read the other set: once they are done, the next
                    // slice's fragment goes there, read while this slice multiplies. The fences keep
                    // the compiler from reusing a set's registers before its products finish.
                    wgmma_wait<1>();
                    fence_packed(hi[d ^ 1]);
                    fence_packed(lo[d ^ 1]);
                    if (kk + 1 < kSlices) load(kk + 1, hi[d ^ 1], lo[d ^ 1]);
                }
            }
            wgmma_wait<0>();
            fence_operands(acc);
            fence_packed(hi[0]);
            fence_packed(hi[1]);
            fence_packed(lo[0]);
            fence_packed(lo[1]);

            // The epilogue and the store: register 4j + 2h + e sits at tile pixel 16 warp + lane / 4
            // + 8h and channel n0 + 8j + 2q + e.
            const auto epilogue = [&](float acc, int row, int col) -> float { return {{EPILOGUE}}; };
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int m = 16 * warp + lane / 4 + 8 * h, th = m / kTileW, tw = m % kTileW;
                const int oh = oh0 + th, ow = ow0 + tw;
                if (th >= kTileH || oh >= kOutH || ow >= kOutW) continue;
                const int px = b * kPixels + oh * kOutW + ow; // GEMM row
                float *dst = out + (long long)b * kGemmN * kPixels + oh * kOutW + ow;
#pragma unroll
                for (int j = 0; j < kBN / 8; ++j)
#pragma unroll
                    for (int e = 0; e < 2; ++e) {
                        const int ch = n0 + 8 * j + 2 * q + e;
                        if (ch < kGemmN) dst[(long long)ch * kPixels] = epilogue(acc[4 * j + 2 * h + e], px, ch);
                    }
            }
        }
    }
}

// ---- 3. pooling of the conv result (pooling problems only) ----
{{>conv_pool}}
