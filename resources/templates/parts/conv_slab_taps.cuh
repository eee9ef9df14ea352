// Where the slab convolution (conv_wgmma_slab.cu) reads x. A task is a tile of kTileH x kTileW
// output pixels of one image; its slab holds every channel of the input rows and columns the
// tile's windows cover, [c][row][col] in fp32, the first column rounded down to a whole kVec-float
// chunk (`lead` columns of that rounding come first) so that copies of kVec floats stay aligned.
// Needs the convolution's sizes (kBatch, kInC, kInH, kInW, kKH, kKW, strides, padding, dilation,
// kOutH, kOutW, kGemmK) and kTileH, kTileW, kVec.
constexpr int kSlabH = (kTileH - 1) * kStrideH + (kKH - 1) * kDilH + 1;
constexpr int kSlabW = ((kTileW - 1) * kStrideW + (kKW - 1) * kDilW + 1 + kVec - 1 + kVec - 1) / kVec * kVec;
constexpr int kSlabFloats = kInC * kSlabH * kSlabW;
constexpr int kSlabChunks = kSlabFloats / kVec;
constexpr int kRowTiles = (kOutH + kTileH - 1) / kTileH, kColTiles = (kOutW + kTileW - 1) / kTileW;
constexpr int kTasks = kBatch * kRowTiles * kColTiles;

// A task's tile: image b, output rows from oh0 and columns from ow0; its slab starts at input row
// ih0 and column iw0, `lead` columns before the first window's.
struct SlabTile {
    int b, oh0, ow0, ih0, iw0, lead;
};
__host__ __device__ __forceinline__ SlabTile slab_tile(int task)
{
    SlabTile u;
    const int colTile = task % kColTiles, rowTile = (task / kColTiles) % kRowTiles;
    u.b = task / (kColTiles * kRowTiles);
    u.oh0 = rowTile * kTileH, u.ow0 = colTile * kTileW;
    u.ih0 = u.oh0 * kStrideH - kPadH;
    const int iwFirst = u.ow0 * kStrideW - kPadW;
    u.lead = (iwFirst % kVec + kVec) % kVec, u.iw0 = iwFirst - u.lead;
    return u;
}

// Chunk i of the slab (kVec floats from slab offset i * kVec): the offset of its first value in
// image u.b's part of x, or -1 where it lies outside x (zero-filled). With kVec 4 (x's rows are
// whole chunks) a chunk lies wholly inside a row of x or wholly outside it.
__host__ __device__ __forceinline__ long long slab_chunk_source(int i, const SlabTile &u)
{
    constexpr int kChunksRow = kSlabW / kVec;
    const int col = i % kChunksRow, row = (i / kChunksRow) % kSlabH, c = i / (kChunksRow * kSlabH);
    const int ih = u.ih0 + row, iw = u.iw0 + col * kVec;
    if ((unsigned)ih >= (unsigned)kInH || (unsigned)iw >= (unsigned)kInW) return -1;
    return ((long long)c * kInH + ih) * kInW + iw;
}

// Tap k = (c, r, s) of the GEMM: its offset in the slab from a window's first value; 0 past K
// (the template zeroes those values where it reads them).
__host__ __device__ __forceinline__ int slab_tap(int k)
{
    if (k >= kGemmK) return 0;
    const int c = k / (kKH * kKW), r = (k / kKW) % kKH, s = k % kKW;
    return (c * kSlabH + r * kDilH) * kSlabW + s * kDilW;
}

// Tile row m (0 .. 63): the slab offset of its window's first value, or -1 past the tile. A row
// inside the tile but past the output (the last row or column tile) reads the slab and is not stored.
__host__ __device__ __forceinline__ int slab_pixel(int m, const SlabTile &u)
{
    const int th = m / kTileW, tw = m % kTileW;
    return th < kTileH ? th * kStrideH * kSlabW + tw * kStrideW + u.lead : -1;
}
