// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// GEMM on Hopper's warpgroup tensor cores (wgmma), operands streamed by the copy engine.
//   out[b] = epilogue(A[b] · B[b]),  A [{{M}} x {{K}}] (stored [{{K}} x {{M}}] when transposed: {{TRANS_A}}),
//   B [{{K}} x {{N}}] (stored [{{N}} x {{K}}] when transposed: {{TRANS_B}}),  batch {{BATCH}}.
// Two launches:
// 1. split_tiles re-lays both operands out as the tensor cores read them: K-major tiles of
//    BM (or BN) rows x 128 bytes (32 TF32 or 64 fp16 values), each row swizzled (16-byte chunk j
//    stored at j ^ (row % 8)), zero-padded to whole tiles, so the main kernel needs no bounds checks
//    and each tile arrives with one bulk copy. With kSplit == 3 every value is stored twice, as a
//    TF32 "big" part and the TF32 remainder, x = hi + lo with hi = rna(x), lo = rna(x - hi): about
//    22 bits of each operand. With kHalf each value is rounded to fp16 (11 bits, as TF32, but half
//    the bytes and twice the tensor-core rate; values beyond 65504 would overflow). With kBf16 and
//    kSplit == 3 it is split into two bf16 parts, hi = rn(x), lo = rn(x - hi): about 16 bits of each
//    operand, fp32's exponent range, and three products at the 16-bit rate cost half of 3xTF32's.
// 2. gemm_wgmma: one producer thread streams the tiles of each 32-deep K step into a
//    {{STAGES}}-stage ring (cp.async.bulk, completion counted on an mbarrier per stage); {{WGS}}
//    consumer warpgroup(s) each own 64 rows x {{BN}} columns and issue per 32-byte step
//    lo·hi + hi·lo + hi·hi (kSplit 3: 3xTF32, or 3xbf16 with kBf16) or hi·hi (kSplit 1, TF32 or fp16).
// With kARegs (A stored [M, K]) A is not re-laid: the producer warpgroup copies its fp32 rows
// straight into padded shared-memory rows (cp.async, the edges zero-filled), each consumer reads
// its fragments from there into registers, rounds them (fp16, bf16 hi + lo, or TF32 hi + lo) and
// issues wgmma with A from registers. The pass then lays out B alone, with K permuted inside each
// 16-deep slice so that a thread's four values of A are one 16-byte read (see permute_k).
// Tensor-core accumulation truncates: over thousands of steps the error grows past the strict
// tolerance. So the tensor cores accumulate only {{PROMOTE}} K steps at a time; each chunk is then
// added to an fp32 register sum with ordinary rounding.
// When the output has fewer tiles than the GPU has SMs (a long K, few rows and columns), K is cut
// into {{KSPLIT}} slices handled by different blocks: each writes its sums to scratch, and
// splitk_combine adds them in slice order and applies the epilogue.
// @problem {{PROBLEM}}
// @precision {{PRECISION}}
// @scratch tiles float32 ({{SPLIT}} / 2 + 1) * ({{A_IMAGES}} * cdiv({{M}}, 64 * {{WGS}}) * 64 * {{WGS}} + {{B_IMAGES}} * cdiv({{N}}, {{BN}}) * {{BN}}) * cdiv({{K}}, 32 * ({{HALF}} + 1)) * 32 uninitialized
// @launch split_tiles grid(({{A_IMAGES}} * cdiv({{M}}, 64 * {{WGS}}) * 64 * {{WGS}} + {{B_IMAGES}} * cdiv({{N}}, {{BN}}) * {{BN}}) * cdiv({{K}}, 32 * ({{HALF}} + 1)) / 32) block(256) args({{A}}, {{B}}, tiles)
// @scratch sums float32 {{SUM_WORDS}} uninitialized
// @launch gemm_wgmma grid(cdiv({{M}}, 64 * {{WGS}}) * cdiv({{N}}, {{BN}}), {{KSPLIT}}, {{BATCH}}) block(128 * ({{WGS}} + 1)) smem({{STAGES}} * {{STAGE_BYTES}} + 2048) args(tiles, {{A}}, sums, {{OUT}}{{EPILOGUE_ARGS}})
{{#SPLITK}}
// @launch splitk_combine grid({{COMBINE_GRID}}) block(256) args(sums, {{OUT}}{{EPILOGUE_ARGS}})
{{/SPLITK}}

{{>operand_parts}}

// ---- problem sizes and tile shapes ----
constexpr int kM = {{M}}, kN = {{N}}, kK = {{K}};
constexpr long long kBatchStrideA = {{A_BATCH_STRIDE}};  // elements between batches (0: shared)
constexpr long long kBatchStrideB = {{B_BATCH_STRIDE}};
constexpr long long kBatchStrideC = {{C_BATCH_STRIDE}};
constexpr int kImagesA = {{A_IMAGES}}, kImagesB = {{B_IMAGES}}; // 1 when shared by every batch, A 0 with kARegs
constexpr bool kTransA = {{TRANS_A}};                    // A stored [K, M] (a transposed view)
constexpr bool kTransB = {{TRANS_B}};                    // B stored [N, K] (a linear layer's weight)

constexpr bool kHalf = {{HALF}};                         // 16-bit operands (else TF32)
constexpr bool kBf16 = {{BF16}};                         // the 16-bit operands are bf16 (else fp16)
using Elem = OperandType<kHalf, kBf16>::Type;           // one value of a tile image
constexpr bool kARegs = {{A_REGS}};                      // A read as fp32 by the product, rounded in registers

constexpr int kWGs = {{WGS}};                            // consumer warpgroups, 64 rows each
constexpr int kBM = 64 * kWGs, kBN = {{BN}};
constexpr int kBK = 128 / sizeof(Elem);                  // K per step: one 128-byte row
constexpr int kStages = {{STAGES}};
constexpr int kPromote = {{PROMOTE}};                    // K steps per tensor-core accumulation chunk
constexpr int kGroupM = {{GROUP_M}};
constexpr int kSplit = {{SPLIT}};                        // 3: 3xTF32, 1: TF32
constexpr int kSplitK = {{KSPLIT}};                      // slices of K, each a block of its own
constexpr int kParts = kSplit == 3 ? 2 : 1;

__host__ __device__ constexpr int cdiv(int a, int b) { return (a + b - 1) / b; }
constexpr int kTilesM = cdiv(kM, kBM), kTilesN = cdiv(kN, kBN), kTilesK = cdiv(kK, kBK);
constexpr int kSliceK = cdiv(kTilesK, kSplitK);          // K steps per slice
constexpr int kBatch = {{BATCH}};
constexpr int kThreads = 128 * (kWGs + 1);

// Tile images in scratch: A as [image][part][tileM][tileK][BM][32], then B as
// [image][part][tileN][tileK][BN][kBK], in Elem. 64-bit offsets: the images pass 2^31 floats for large problems.
constexpr long long kTileA = (long long)kBM * kBK, kTileB = (long long)kBN * kBK;
constexpr long long kPartA = (long long)kTilesM * kTilesK * kTileA, kPartB = (long long)kTilesN * kTilesK * kTileB;
constexpr long long kImageFloatsA = kImagesA * kParts * kPartA;
constexpr long long kRowsA = (long long)kImagesA * kTilesM * kBM; // A's padded rows, all images

// Shared memory per stage: the A parts, then the B parts. Every tile is a whole number of
// 1024-byte swizzle atoms (8 rows of 128 bytes), so each starts on a 1024-byte boundary. With
// kARegs, A's fp32 rows of one K step take kBK words each plus 16 of padding: rows 16 words (mod 32)
// apart put the 16-byte fragment reads of a quarter-warp (two rows, four threads each) in distinct
// banks.
constexpr int kARowFloats = kBK + 16;
constexpr int kStageBytesA = kARegs ? kBM * kARowFloats * 4 : kParts * kBM * 128, kStageBytesB = kParts * kBN * 128;
constexpr int kStageBytes = kStageBytesA + kStageBytesB;
static_assert(kStageBytes == {{STAGE_BYTES}}, "the launch's shared memory follows the stage layout");
static_assert(kStageBytesA % 1024 == 0, "B's tiles start on a swizzle atom");

static_assert(kWGs >= 1 && kWGs <= 2, "one or two consumer warpgroups");
static_assert(kBN == 64 || kBN == 96 || kBN == 128 || kBN == 256, "wgmma tiles of 64, 96, 128 or 256 columns");
static_assert(kSplit == 1 || (kSplit == 3 && (!kHalf || kBf16)), "split 1 (TF32, fp16 or bf16) or 3 (3xTF32 or 3xbf16)");
static_assert(kHalf || !kBf16, "bf16 operands are 16-bit ones");
static_assert(!kARegs || (!kTransA && kK % 4 == 0 && kBatchStrideA % 4 == 0 && kImagesA == 0),
              "A in registers: an A stored [M, K] in 16-byte rows");
static_assert(kStages >= 2 && kPromote >= 1, "at least two stages");
static_assert(kStages * kStageBytes + 2048 <= {{SMEM_PER_BLOCK}}, "the stage ring must fit in shared memory");

// ---- 1. operands into tensor-core tiles ----

// The 16 bytes of 4 TF32 values or 8 16-bit values rounded from v[0 .. 16 / sizeof(Elem)): the
// high parts, or with `low` the remainders x - hi, rounded again.
constexpr int kChunkValues = 16 / sizeof(Elem); // values per 16-byte chunk: 4 TF32, 8 fp16 or bf16
__device__ __forceinline__ float4 chunk(const float *v, bool low)
{
    float part[kChunkValues];
#pragma unroll
    for (int i = 0; i < kChunkValues; ++i) {
        float hi, lo;
        split_value<Elem>(v[i], hi, lo);
        part[i] = low ? lo : hi;
    }
    return pack16<Elem>(part);
}

// A block re-lays one patch of 32 tile rows x one K step (kBK values) through shared memory, so
// that both sides are coalesced whatever the operand's layout: the reads run along the stored
// rows (16-byte loads where K allows them, or 128 bytes of rows per k down the columns), and each
// warp writes four whole 128-byte tile rows per part.
constexpr int kPatchRows = 32;
static_assert(kBK == 8 * kChunkValues && kBM % kPatchRows == 0 && kBN % kPatchRows == 0, "patches of whole tile rows");
using Patch = float[kPatchRows][kBK + 1]; // + 1: the chunk reads of a warp fall in distinct banks

// An operand stored [rows, K] (a plain A, a transposed B).
template <bool kVector>
__device__ __forceinline__ void load_along_rows(Patch &s, const float *op, int rows, int r0, int k0)
{
    for (int q = threadIdx.x; q < kPatchRows * kBK / 4; q += blockDim.x) {
        const int r = q / (kBK / 4), c = 4 * (q % (kBK / 4));
        const int row = r0 + r, k = k0 + c;
        const float *src = op + (long long)row * kK + k;
        float v[4];
        if (kVector && row < rows && k < kK) {
            const float4 f = __ldg(reinterpret_cast<const float4 *>(src));
            v[0] = f.x, v[1] = f.y, v[2] = f.z, v[3] = f.w;
        } else {
#pragma unroll
            for (int i = 0; i < 4; ++i)
                v[i] = row < rows && k + i < kK ? __ldg(src + i) : 0.0f;
        }
#pragma unroll
        for (int i = 0; i < 4; ++i)
            s[r][c + i] = v[i];
    }
}

// An operand stored [K, rows] (a plain B, a transposed A): a warp reads 32 consecutive rows of one k.
__device__ __forceinline__ void load_down_columns(Patch &s, const float *op, int rows, int r0, int k0)
{
    for (int q = threadIdx.x; q < kPatchRows * kBK; q += blockDim.x) {
        const int r = q % kPatchRows, k = q / kPatchRows;
        s[r][k] = r0 + r < rows && k0 + k < kK ? __ldg(op + (long long)(k0 + k) * rows + r0 + r) : 0.0f;
    }
}

// With kARegs a thread of the product (q = lane % 4) reads its four values of A in each 16-deep
// slice as the one 16-byte chunk at 4q, and B's tile rows hold K in the matching order: the same
// sum in another order. A 16-bit fragment holds positions 2q, 2q + 1, 2q + 8, 2q + 9 (one k16
// call), so position 2q + j (+8 h) holds K 4q + 2h + j; a TF32 slice is two k8 calls of positions
// q, q + 4 and 8 + q, 12 + q, so position q + 4j (+8 h) holds K 4q + 2h + j.
__host__ __device__ constexpr int permute_k(int k)
{
    const int slice = k & ~15, h = (k & 15) / 8, m = k & 7;
    return slice + 2 * h + (kHalf ? 4 * (m / 2) + m % 2 : 4 * (m % 4) + m / 4);
}
constexpr bool kPermuteK = kARegs;
static_assert(!kHalf || (permute_k(2) == 4 && permute_k(9) == 3 && permute_k(15) == 15 && permute_k(22) == 28),
              "16-bit K order");
static_assert(kHalf || (permute_k(1) == 4 && permute_k(4) == 1 && permute_k(9) == 6 && permute_k(15) == 15),
              "TF32 K order");

// 256 threads: thread t writes chunk t % 8 of patch row t / 8, in each part.
__device__ __forceinline__ void store_patch(const Patch &s, Elem *tiles, long long partStride, long long tileBase, int row0)
{
    const int r = threadIdx.x / 8, c = threadIdx.x % 8, row = row0 + r;
    float v[kChunkValues];
#pragma unroll
    for (int i = 0; i < kChunkValues; ++i)
        v[i] = s[r][kPermuteK ? permute_k(c * kChunkValues + i) : c * kChunkValues + i];
    const int slot = c ^ (row & 7);
    reinterpret_cast<float4 *>(tiles + tileBase + (long long)row * kBK)[slot] = chunk(v, false);
    if constexpr (kParts == 2)
        reinterpret_cast<float4 *>(tiles + tileBase + partStride + (long long)row * kBK)[slot] = chunk(v, true);
}

// Whole-vector loads along K need every row to start on 16 bytes.
constexpr bool kVectorA = kK % 4 == 0 && kBatchStrideA % 4 == 0;
constexpr bool kVectorB = kK % 4 == 0 && kBatchStrideB % 4 == 0;

extern "C" __global__ void __launch_bounds__(256)
split_tiles(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ tileWords)
{
    __shared__ Patch s;
    Elem *tiles = reinterpret_cast<Elem *>(tileWords);
    constexpr long long kPatchesA = kRowsA / kPatchRows * kTilesK;
    long long patch = blockIdx.x;
    const bool isA = patch < kPatchesA; // the same for the whole block
    if (!isA)
        patch -= kPatchesA;
    const int tk = patch % kTilesK;
    const long long rowAll = patch / kTilesK * kPatchRows; // over the images' padded rows
    if (isA) {
        const int image = rowAll / (kTilesM * kBM), r0 = rowAll % (kTilesM * kBM);
        const float *op = A + image * kBatchStrideA;
        if constexpr (kTransA)
            load_down_columns(s, op, kM, r0, tk * kBK);
        else
            load_along_rows<kVectorA>(s, op, kM, r0, tk * kBK);
        __syncthreads();
        const long long tile = ((long long)image * kParts * kTilesM + r0 / kBM) * kTilesK + tk;
        store_patch(s, tiles, kPartA, tile * kTileA, r0 % kBM);
    } else {
        const int image = rowAll / (kTilesN * kBN), r0 = rowAll % (kTilesN * kBN);
        const float *op = B + image * kBatchStrideB;
        if constexpr (kTransB)
            load_along_rows<kVectorB>(s, op, kN, r0, tk * kBK);
        else
            load_down_columns(s, op, kN, r0, tk * kBK);
        __syncthreads();
        const long long tile = ((long long)image * kParts * kTilesN + r0 / kBN) * kTilesK + tk;
        store_patch(s, tiles + kImageFloatsA, kPartB, tile * kTileB, r0 % kBN);
    }
}

// ---- 2. the product ----

{{>hopper_pipeline}}

{{>wgmma_smem}}

{{>wgmma_half_regs}}

{{>wgmma_tf32_regs}}

// With kARegs (parts/wgmma_consumer_regs.cuh): the registers of one slice's A fragment, four TF32
// values for each of its two k8 calls or four registers of packed 16-bit values for its one k16
// call, and what is done with them, by their type.
template <bool kTf32> struct FragmentOf { using Type = unsigned[1][4]; };
template <> struct FragmentOf<true> { using Type = float[2][4]; };

// Rounds the slice's values of rows r (u) and r + 8 (w) into the fragment: 16-bit register i holds
// row i & 1, positions 2q (+8 for i >= 2) and +1; TF32 call j, register i, row i & 1, position
// q + 8j (+4 for i >= 2). lo holds what the rounding left (split 3), else zeros.
__device__ __forceinline__ void round_fragment(const float4 &u, const float4 &w, float (&hi)[2][4], float (&lo)[2][4])
{
    const float row[2][4] = { {u.x, u.y, u.z, u.w}, {w.x, w.y, w.z, w.w} };
#pragma unroll
    for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const float x = row[i & 1][2 * j + i / 2];
            hi[j][i] = to_tf32(x);
            lo[j][i] = kParts == 2 ? to_tf32(x - hi[j][i]) : 0.0f;
        }
}
__device__ __forceinline__ void round_fragment(const float4 &u, const float4 &w, unsigned (&hi)[1][4],
                                               unsigned (&lo)[1][4])
{
    split_pack<Elem, kParts == 2>(u.x, u.y, hi[0][0], lo[0][0]);
    split_pack<Elem, kParts == 2>(w.x, w.y, hi[0][1], lo[0][1]);
    split_pack<Elem, kParts == 2>(u.z, u.w, hi[0][2], lo[0][2]);
    split_pack<Elem, kParts == 2>(w.z, w.w, hi[0][3], lo[0][3]);
}
// d (+)= A · B, one call of a slice with A from registers.
__device__ __forceinline__ void wgmma_regs(float (&d)[kBN / 2], const float (&a)[4], unsigned long long descB, int scaleD)
{
    wgmma_tf32_regs(d, a, descB, scaleD);
}
__device__ __forceinline__ void wgmma_regs(float (&d)[kBN / 2], const unsigned (&a)[4], unsigned long long descB,
                                           int scaleD)
{
    wgmma_half_regs<Elem>(d, a, descB, scaleD);
}
// Keeps a call's fragment registers in place until here.
__device__ __forceinline__ void fence_fragment(float (&a)[4]) { fence_operands(a); }
__device__ __forceinline__ void fence_fragment(unsigned (&a)[4]) { fence_packed(a); }

{{>cp_async_zfill}}

{{>stage_b_copy}}

extern "C" __global__ void __launch_bounds__(kThreads, 1)
gemm_wgmma(const float *__restrict__ tileWords, const float *__restrict__ A, float *__restrict__ sums,
           float *__restrict__ C{{EPILOGUE_PARAMS}})
{
    extern __shared__ unsigned char smemRaw[];
    // The swizzle pattern follows address bits, so the ring starts on a 1024-byte boundary.
    unsigned char *ring = smemRaw + ((1024 - smem_addr(smemRaw) % 1024) % 1024);
    unsigned long long *full = reinterpret_cast<unsigned long long *>(ring + kStages * kStageBytes);
    unsigned long long *empty = full + kStages;

{{>grouped_tile}}
    const int batch = blockIdx.z;
    // This block's slice of K: steps kt0 .. kt0 + steps - 1.
    const int kt0 = blockIdx.y * kSliceK, steps = min(kSliceK, kTilesK - kt0);

    if (threadIdx.x == 0) {
        for (int s = 0; s < kStages; ++s) {
            // With kARegs each producer thread's copies of A arrive too.
            mbar_init(&full[s], kARegs ? 129 : 1);
            mbar_init(&empty[s], kWGs);
        }
        mbar_init_fence();
    }
    __syncthreads();

    const int wg = threadIdx.x / 128;
    if (kARegs && wg == 0) {
{{>gemm_wgmma_copy_a}}
        return;
    }
    if (wg == 0) {
        // Producer: one thread keeps the ring full.
        if (threadIdx.x != 0) return;
        const Elem *tiles = reinterpret_cast<const Elem *>(tileWords);
        const Elem *tilesA = tiles + (long long)(kImagesA > 1 ? batch : 0) * kParts * kPartA +
                              ((long long)tileM * kTilesK + kt0) * kTileA;
        const Elem *tilesB = tiles + kImageFloatsA + (long long)(kImagesB > 1 ? batch : 0) * kParts * kPartB +
                              ((long long)tileN * kTilesK + kt0) * kTileB;
        for (int kt = 0; kt < steps; ++kt) {
            const int s = kt % kStages;
            if (kt >= kStages) mbar_wait(&empty[s], ((kt / kStages) - 1) & 1);
            mbar_expect_tx(&full[s], kStageBytes);
            unsigned char *stage = ring + s * kStageBytes;
#pragma unroll
            for (int part = 0; part < kParts; ++part) {
                bulk_copy(stage + part * kBM * 128, tilesA + part * kPartA + kt * kTileA, kBM * 128, &full[s]);
                bulk_copy(stage + kStageBytesA + part * kBN * 128, tilesB + part * kPartB + kt * kTileB, kBN * 128,
                          &full[s]);
            }
        }
        return;
    }

    // Consumers: warpgroup c owns rows 64c .. 64c+63 of the block tile.
    const int c = wg - 1;
{{#A_REGS}}
{{>wgmma_consumer_regs}}
{{/A_REGS}}
{{^A_REGS}}
{{>wgmma_consumer}}
{{/A_REGS}}

    // Epilogue: a function of acc, row, col and batch (with K split, the slice's sums go to scratch
    // as they are). Register 4j + r of a thread sits at row 16 * warp + lane / 4 (+8 for r >= 2)
    // and column 8j + 2 * (lane % 4) (+1 for odd r).
    const auto epilogue = [&](float acc, int row, int col) -> float {
        if constexpr (kSplitK > 1)
            return acc;
        else
            return {{EPILOGUE}};
    };
    const int lane = threadIdx.x % 32, warp = (threadIdx.x % 128) / 32;
    C = kSplitK > 1 ? sums + ((long long)blockIdx.y * kBatch + batch) * kM * kN : C + batch * kBatchStrideC;
#pragma unroll
    for (int j = 0; j < kBN / 8; ++j)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = tileM * kBM + c * 64 + warp * 16 + lane / 4 + 8 * h;
            const int col = tileN * kBN + 8 * j + 2 * (lane % 4);
            if (row >= kM || col >= kN) continue;
            float *dst = C + (long long)row * kN + col;
            const float v0 = epilogue(total[4 * j + 2 * h], row, col);
            if (col + 1 >= kN) {
                dst[0] = v0;
            } else if constexpr (kN % 2 == 0 && (kBatchStrideC % 2 == 0 || kSplitK > 1)) {
                const float v1 = epilogue(total[4 * j + 2 * h + 1], row, col + 1);
                *reinterpret_cast<float2 *>(dst) = make_float2(v0, v1); // 8-byte aligned: col is even
            } else {
                dst[0] = v0;
                dst[1] = epilogue(total[4 * j + 2 * h + 1], row, col + 1);
            }
        }
}

using Partial = float;
constexpr int kSlices = kSplitK;
{{>splitk_combine}}
