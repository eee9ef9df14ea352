// The output pixels of a block: a run of kBM pixels in (batch, row, column) order, or, with the
// pooling fused, a kTileH x kTileW rectangle of one image, so that most pooling windows lie
// inside one block (a run of pixels is a row or two, and most windows would be split).
constexpr bool kFusedPool = {{FUSED_POOL}};
constexpr int kTileW = {{TILE_W}}, kTileH = {{TILE_H}};
constexpr int kTilesW = cdiv(kOutW, kTileW), kTilesH = cdiv(kOutH, kTileH);
static_assert(!kFusedPool || (kTileW * kTileH <= kBM && kTileW >= 1 && kTileH >= 1), "the rectangle fits the block tile");

// Pixel m = b * OH*OW + oh * OW + ow of slot i of block `block`; m >= kGemmM for a slot past the map.
__device__ __forceinline__ int tile_pixel(int block, int i)
{
    if constexpr (!kFusedPool) {
        return block * kBM + i;
    } else {
        const int b = block / (kTilesH * kTilesW), th = block / kTilesW % kTilesH, tw = block % kTilesW;
        const int oh = th * kTileH + i / kTileW, ow = tw * kTileW + i % kTileW;
        if (i >= kTileH * kTileW || oh >= kOutH || ow >= kOutW) return kGemmM;
        return b * kPixels + oh * kOutW + ow;
    }
}
