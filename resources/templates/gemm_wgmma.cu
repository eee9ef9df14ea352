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
// Tensor-core accumulation truncates: over thousands of steps the error grows past the strict
// tolerance. So the tensor cores accumulate only {{PROMOTE}} K steps at a time; each chunk is then
// added to an fp32 register sum with ordinary rounding.
// With OVERLAP (here {{OVERLAP}}) there is one launch: the pass of 1. runs inside the product kernel, on
// the three idle warps of the producer's warpgroup, in the order the products consume the tiles
// (K step by K step), so that re-laying the operands overlaps the products instead of preceding
// them. The warps take patches from a queue (a counter in zero-filled scratch) and count each
// tile's finished patches on a flag; the producer thread waits for a tile's flag before its bulk
// copy. Only warps that never wait take patches, so every patch taken is finished and no block
// waits on one that is not resident.
// When the output has fewer tiles than the GPU has SMs (a long K, few rows and columns), K is cut
// into {{KSPLIT}} slices handled by different blocks: each writes its sums to scratch, and
// splitk_combine adds them in slice order and applies the epilogue.
// @problem {{PROBLEM}}
// @precision {{PRECISION}}
// @scratch tiles float32 ({{SPLIT}} / 2 + 1) * ({{A_IMAGES}} * cdiv({{M}}, 64 * {{WGS}}) * 64 * {{WGS}} + {{B_IMAGES}} * cdiv({{N}}, {{BN}}) * {{BN}}) * cdiv({{K}}, 32 * ({{HALF}} + 1)) * 32 uninitialized
{{^OVERLAP}}
// @launch split_tiles grid(({{A_IMAGES}} * cdiv({{M}}, 64 * {{WGS}}) * 64 * {{WGS}} + {{B_IMAGES}} * cdiv({{N}}, {{BN}}) * {{BN}}) * cdiv({{K}}, 32 * ({{HALF}} + 1)) / 32) block(256) args({{A}}, {{B}}, tiles)
// @scratch ready int32 1 uninitialized
{{/OVERLAP}}
{{#OVERLAP}}
// @scratch ready int32 ({{A_IMAGES}} * cdiv({{M}}, 64 * {{WGS}}) + {{B_IMAGES}} * cdiv({{N}}, {{BN}})) * cdiv({{K}}, 32 * ({{HALF}} + 1)) + 1
{{/OVERLAP}}
// @scratch sums float32 {{SUM_WORDS}} uninitialized
// @launch gemm_wgmma grid(cdiv({{M}}, 64 * {{WGS}}) * cdiv({{N}}, {{BN}}), {{KSPLIT}}, {{BATCH}}) block(128 * ({{WGS}} + 1)) smem({{STAGES}} * ({{SPLIT}} / 2 + 1) * (64 * {{WGS}} + {{BN}}) * 128 + 2048 + {{OVERLAP}} * 24576 * ({{HALF}} + 1)) args({{A}}, {{B}}, ready, tiles, sums, {{OUT}}{{EPILOGUE_ARGS}})
{{#SPLITK}}
// @launch splitk_combine grid({{COMBINE_GRID}}) block(256) args(sums, {{OUT}}{{EPILOGUE_ARGS}})
{{/SPLITK}}

{{>operand_parts}}

// ---- problem sizes and tile shapes ----
constexpr int kM = {{M}}, kN = {{N}}, kK = {{K}};
constexpr long long kBatchStrideA = {{A_BATCH_STRIDE}};  // elements between batches (0: shared)
constexpr long long kBatchStrideB = {{B_BATCH_STRIDE}};
constexpr long long kBatchStrideC = {{C_BATCH_STRIDE}};
constexpr int kImagesA = {{A_IMAGES}}, kImagesB = {{B_IMAGES}}; // 1 when shared by every batch
constexpr bool kTransA = {{TRANS_A}};                    // A stored [K, M] (a transposed view)
constexpr bool kTransB = {{TRANS_B}};                    // B stored [N, K] (a linear layer's weight)

constexpr bool kHalf = {{HALF}};                         // 16-bit operands (else TF32)
constexpr bool kBf16 = {{BF16}};                         // the 16-bit operands are bf16 (else fp16)
using Elem = OperandType<kHalf, kBf16>::Type;           // one value of a tile image

constexpr int kWGs = {{WGS}};                            // consumer warpgroups, 64 rows each
constexpr int kBM = 64 * kWGs, kBN = {{BN}};
constexpr int kBK = 128 / sizeof(Elem);                  // K per step: one 128-byte row
constexpr int kStages = {{STAGES}};
constexpr int kPromote = {{PROMOTE}};                    // K steps per tensor-core accumulation chunk
constexpr int kGroupM = {{GROUP_M}};
constexpr int kSplit = {{SPLIT}};                        // 3: 3xTF32, 1: TF32
constexpr int kSplitK = {{KSPLIT}};                      // slices of K, each a block of its own
constexpr bool kOverlap = {{OVERLAP}};                   // the operand pass inside the product kernel
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
// 1024-byte swizzle atoms (8 rows of 128 bytes), so each starts on a 1024-byte boundary.
constexpr int kStageBytesA = kParts * kBM * 128, kStageBytesB = kParts * kBN * 128;
constexpr int kStageBytes = kStageBytesA + kStageBytesB;

static_assert(kWGs >= 1 && kWGs <= 2, "one or two consumer warpgroups");
static_assert(kBN == 64 || kBN == 96 || kBN == 128 || kBN == 256, "wgmma tiles of 64, 96, 128 or 256 columns");
static_assert(kSplit == 1 || (kSplit == 3 && (!kHalf || kBf16)), "split 1 (TF32, fp16 or bf16) or 3 (3xTF32 or 3xbf16)");
static_assert(kHalf || !kBf16, "bf16 operands are 16-bit ones");
static_assert(kStages >= 2 && kPromote >= 1, "at least two stages");
static_assert(kStages * kStageBytes + 2048 + kOverlap * 24576 * (kHalf + 1) <= {{SMEM_PER_BLOCK}},
              "the stage ring (and the converters' buffers) must fit in shared memory");

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

// 256 threads: thread t writes chunk t % 8 of patch row t / 8, in each part.
__device__ __forceinline__ void store_patch(const Patch &s, Elem *tiles, long long partStride, long long tileBase, int row0)
{
    const int r = threadIdx.x / 8, c = threadIdx.x % 8, row = row0 + r;
    float v[kChunkValues];
#pragma unroll
    for (int i = 0; i < kChunkValues; ++i)
        v[i] = s[r][c * kChunkValues + i];
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

// ---- 1b. the same pass inside the product kernel (kOverlap) ----

{{>cp_async_zfill}}

// A converter warp takes one patch (32 tile rows x one K step) at a time, in two steps: its values
// come into a shared-memory buffer as they are stored (cp.async: many copies in flight, no
// registers held), then the warp rounds them into the tile rows. Two buffers a warp, so the copies
// of the next patch fly while this one is rounded. An operand stored [rows, K] lands as
// [32 rows][kBK]; one stored [K, rows] as [kBK][32 rows].
constexpr int kConverters = 3;                           // warps 1-3 of the producer's warpgroup
constexpr int kPatchFloats = kPatchRows * kBK;           // 8 KB of fp32 (16-bit tiles), 4 KB (TF32)

struct PatchJob {
    const float *op;  // the operand's image
    int rows;         // its rows (M or N): bounds, and the stride of a [K, rows] layout
    int r0, k0;       // the patch's first row and K
    bool columns;     // stored [K, rows]
    Elem *tile;       // the tile's first part
    long long partStride;
    int row0;         // the patch's first row within the tile
    int flag;
    bool vector;      // whole, aligned 16-byte pieces
};

// Rows and columns whose 16-byte pieces are whole and aligned are copied 16 bytes at a time.
template <bool kVector>
__device__ __forceinline__ void patch_copy(const PatchJob &j, float *buf)
{
    const int lane = threadIdx.x % 32;
    constexpr int kPieces = kPatchFloats / 4 / 32; // 16-byte pieces a lane
#pragma unroll
    for (int i = 0; i < kPieces; ++i) {
        const int q = lane + 32 * i;
        int row, k, at;
        if (j.columns) {
            k = q / 8, row = 4 * (q % 8), at = k * kPatchRows + row; // [kBK][32]
        } else {
            row = q / (kBK / 4), k = 4 * (q % (kBK / 4)), at = row * kBK + k; // [32][kBK]
        }
        const int gr = j.r0 + row, gk = j.k0 + k;
        const long long offset = j.columns ? (long long)gk * j.rows + gr : (long long)gr * kK + gk;
        if constexpr (kVector) {
            const bool inside = gr < j.rows && gk < kK;
            cp_async<16>(buf + at, inside ? j.op + offset : j.op, inside);
        } else {
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int er = j.columns ? gr + e : gr, ek = j.columns ? gk : gk + e;
                const bool inside = er < j.rows && ek < kK;
                cp_async<4>(buf + at + e, inside ? j.op + offset + e : j.op, inside); // the next row or k
            }
        }
    }
}

// Rounds a copied patch into its tile rows (and, for kSplit 3, the remainders into the second
// part). [32][kBK]: lane l takes chunk l % 8 of rows l / 8, l / 8 + 4, ... (each store writes four
// whole 128-byte tile rows); [kBK][32]: lane l takes tile row l, reading one column of the buffer.
__device__ __forceinline__ void patch_round(const PatchJob &j, const float *buf)
{
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int r = j.columns ? lane : lane / 8 + 4 * i, c = j.columns ? i : lane % 8;
        float v[kChunkValues];
#pragma unroll
        for (int e = 0; e < kChunkValues; ++e)
            v[e] = j.columns ? buf[(c * kChunkValues + e) * kPatchRows + r] : buf[r * kBK + c * kChunkValues + e];
        const int row = j.row0 + r, slot = c ^ (row & 7);
        reinterpret_cast<float4 *>(j.tile + (long long)row * kBK)[slot] = chunk(v, false);
        if constexpr (kParts == 2)
            reinterpret_cast<float4 *>(j.tile + j.partStride + (long long)row * kBK)[slot] = chunk(v, true);
    }
}

// The queue: per K step, A's patches (image by image, tile by tile) then B's; the steps in the
// order the blocks consume them (the first step of every K slice, then the second, ...). A flag
// per tile and K step counts its finished patches: A's flags, then B's, then the queue's counter.
constexpr int kPatchesA = kBM / kPatchRows, kPatchesB = kBN / kPatchRows; // per tile
constexpr long long kStepItemsA = (long long)kImagesA * kTilesM * kPatchesA;
constexpr long long kStepItems = kStepItemsA + (long long)kImagesB * kTilesN * kPatchesB;
constexpr long long kItems = kStepItems * kSliceK * kSplitK;
constexpr long long kFlagsA = (long long)kImagesA * kTilesM * kTilesK;
constexpr long long kFlags = kFlagsA + (long long)kImagesB * kTilesN * kTilesK;
static_assert(!kOverlap || (kItems < (1ll << 31) && kFlags < (1ll << 31)), "the queue and the flags count in 32 bits");
// The converters' buffers follow the ring and its barriers in shared memory.
constexpr int kConvertBytes = kOverlap ? kConverters * 2 * kPatchFloats * 4 : 0;
static_assert(kConvertBytes == kOverlap * 24576 * (kHalf + 1), "the launch line's shared memory counts these buffers");

// Patch `item` of the queue; false for a step past the end of a shorter last slice.
__device__ __forceinline__ bool patch_job(int item, const float *A, const float *B, Elem *tiles, PatchJob &j)
{
    const int order = item / kStepItems;
    const int kt = (order % kSplitK) * kSliceK + order / kSplitK;
    if (kt >= kTilesK) return false;
    long long r = item % kStepItems;
    const bool isA = r < kStepItemsA;
    if (!isA) r -= kStepItemsA;
    const int tilesRows = isA ? kTilesM : kTilesN, patches = isA ? kPatchesA : kPatchesB, tileRows = isA ? kBM : kBN;
    const int image = r / (tilesRows * patches), r0 = r % (tilesRows * patches) * kPatchRows;
    const int tileIndex = image * tilesRows + r0 / tileRows;
    const long long tile = ((long long)image * kParts * tilesRows + r0 / tileRows) * kTilesK + kt;
    j.op = isA ? A + image * kBatchStrideA : B + image * kBatchStrideB;
    j.rows = isA ? kM : kN;
    j.r0 = r0;
    j.k0 = kt * kBK;
    j.columns = isA ? kTransA : !kTransB;
    j.tile = isA ? tiles + tile * kTileA : tiles + kImageFloatsA + tile * kTileB;
    j.partStride = isA ? kPartA : kPartB;
    j.row0 = r0 % tileRows;
    j.flag = (isA ? 0 : kFlagsA) + tileIndex * kTilesK + kt;
    j.vector = isA ? (kTransA ? kM % 4 == 0 && kBatchStrideA % 4 == 0 : kVectorA)
                   : (kTransB ? kVectorB : kN % 4 == 0 && kBatchStrideB % 4 == 0);
    return true;
}

// A converter warp's part of the pass: patches from the queue until it is empty. A patch's stores
// are ordered before the bulk copies of other blocks (a proxy fence: those read through the async
// proxy) and then its tile's flag is raised with release semantics.
__device__ __forceinline__ int next_item(int *counter)
{
    int item = 0;
    if (threadIdx.x % 32 == 0) item = atomicAdd(counter, 1);
    return __shfl_sync(0xffffffffu, item, 0);
}
__device__ __forceinline__ void copy_patch(const PatchJob &j, float *buf)
{
    if (j.vector)
        patch_copy<true>(j, buf);
    else
        patch_copy<false>(j, buf);
    cp_async_commit();
}
__device__ void overlap_pass(const float *__restrict__ A, const float *__restrict__ B, int *ready,
                             Elem *__restrict__ tiles, float *buffers)
{
    int *counter = ready + kFlags;
    float *buf = buffers, *bufNext = buffers + kPatchFloats;
    PatchJob job, jobNext;
    int item = next_item(counter);
    bool have = false;
    while (item < kItems && !(have = patch_job(item, A, B, tiles, job))) item = next_item(counter);
    if (have) copy_patch(job, buf);
    while (have) {
        // The next patch's copies go out before this one is rounded.
        bool next = false;
        do item = next_item(counter);
        while (item < kItems && !(next = patch_job(item, A, B, tiles, jobNext)));
        if (next) {
            copy_patch(jobNext, bufNext);
            cp_async_wait<1>();
        } else {
            cp_async_wait<0>();
        }
        __syncwarp();
        patch_round(job, buf);
        asm volatile("fence.proxy.async.global;\n" ::: "memory");
        __threadfence();
        __syncwarp(); // also: every lane is done with buf before it is refilled
        if (threadIdx.x % 32 == 0) asm volatile("red.release.gpu.global.add.s32 [%0], 1;\n" ::"l"(ready + job.flag) : "memory");
        job = jobNext;
        float *t = buf;
        buf = bufNext, bufNext = t;
        have = next;
    }
}

__device__ __forceinline__ int ld_acquire(const int *p)
{
    int v;
    asm volatile("ld.acquire.gpu.global.s32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
    return v;
}
// The producer's wait for a tile's patches, then the proxy fence that orders its bulk copy after them.
__device__ __forceinline__ void wait_ready(const int *flag, int patches)
{
    while (ld_acquire(flag) < patches) __nanosleep(32);
    asm volatile("fence.proxy.async.global;\n" ::: "memory");
}

// ---- 2. the product ----

{{>hopper_pipeline}}

{{>wgmma_smem}}

extern "C" __global__ void __launch_bounds__(kThreads, 1)
gemm_wgmma(const float *__restrict__ A, const float *__restrict__ B, int *ready, float *__restrict__ tileWords,
           float *__restrict__ sums, float *__restrict__ C{{EPILOGUE_PARAMS}})
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
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], kWGs);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    const int wg = threadIdx.x / 128;
    if (wg == 0) {
        // Producer: one thread keeps the ring full; with kOverlap warps 1-3 run the operand pass.
        if constexpr (kOverlap)
            if (threadIdx.x >= 32) {
                float *buffers = reinterpret_cast<float *>(ring + kStages * kStageBytes + 256);
                overlap_pass(A, B, ready, reinterpret_cast<Elem *>(tileWords),
                             buffers + (threadIdx.x / 32 - 1) * 2 * kPatchFloats);
                return;
            }
        if (threadIdx.x != 0) return;
        const Elem *tiles = reinterpret_cast<const Elem *>(tileWords);
        // The flags of this block's first K step (32-bit: the producer keeps few registers).
        const int flagA = ((kImagesA > 1 ? batch : 0) * kTilesM + tileM) * kTilesK + kt0;
        const int flagB = kFlagsA + ((kImagesB > 1 ? batch : 0) * kTilesN + tileN) * kTilesK + kt0;
        const Elem *tilesA = tiles + (long long)(kImagesA > 1 ? batch : 0) * kParts * kPartA +
                              ((long long)tileM * kTilesK + kt0) * kTileA;
        const Elem *tilesB = tiles + kImageFloatsA + (long long)(kImagesB > 1 ? batch : 0) * kParts * kPartB +
                              ((long long)tileN * kTilesK + kt0) * kTileB;
        for (int kt = 0; kt < steps; ++kt) {
            const int s = kt % kStages;
            if (kt >= kStages) mbar_wait(&empty[s], ((kt / kStages) - 1) & 1);
            if constexpr (kOverlap) {
                wait_ready(ready + flagA + kt, kPatchesA);
                wait_ready(ready + flagB + kt, kPatchesB);
            }
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
{{>wgmma_consumer}}

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
