// The pooling fused into the convolution's tiles (kFusedPool): the block's conv tile, after the
// epilogue, sits channel-major in shared memory ([BN][kLdC], slot i = row i / kTileW, column
// i % kTileW of the rectangle). Every pooling window that touches the rectangle is reduced over the
// part the block holds; a window held whole is stored, a split one is merged with an atomic.
{{>pool_kind}}
{{>pool_atomics}}

constexpr int kLdC = kBM + 4; // channel stride: a warp's stores (8 pixels x 4 channel pairs) hit 32 banks

// The most pooled rows (columns) whose windows reach kTileH (kTileW) consecutive conv rows
// (columns): the loop below has constant bounds, so its index arithmetic is multiplications.
constexpr int kPoolRows = (kTileH + kPoolKH - 2) / kPoolSH + 1, kPoolCols = (kTileW + kPoolKW - 2) / kPoolSW + 1;

// Not inlined: its addressing would otherwise compete with the accumulators for the registers that
// two or three blocks per SM leave (ptxas spilled at 128).
__device__ __noinline__ void pool_rect(float *__restrict__ out, const float *sC, int block, int n0, int tid)
{
    const int b = block / (kTilesH * kTilesW), oh0 = block / kTilesW % kTilesH * kTileH, ow0 = block % kTilesW * kTileW;
    const int oh1 = min(oh0 + kTileH, kOutH), ow1 = min(ow0 + kTileW, kOutW); // past the last held row, column
    // The first pooled row (column) whose window reaches the held conv rows (columns), and the last.
    const int phLo = max(0, oh0 + kPoolPadH - kPoolKH + kPoolSH) / kPoolSH;
    const int phHi = min(kPoolOutH - 1, (oh1 - 1 + kPoolPadH) / kPoolSH);
    const int pwLo = max(0, ow0 + kPoolPadW - kPoolKW + kPoolSW) / kPoolSW;
    const int pwHi = min(kPoolOutW - 1, (ow1 - 1 + kPoolPadW) / kPoolSW);
    constexpr int kItems = kBN * kPoolRows * kPoolCols;
#pragma unroll 2
    for (int it = tid; it < kItems; it += 128 * kWGs) {
        const int pw = pwLo + it % kPoolCols, ph = phLo + it / kPoolCols % kPoolRows, n = it / (kPoolCols * kPoolRows);
        if (pw > pwHi || ph > phHi || n0 + n >= kGemmN) continue;
        const int h0 = ph * kPoolSH - kPoolPadH, w0 = pw * kPoolSW - kPoolPadW;
        float v = kPoolMax ? -__int_as_float(0x7f800000) : 0.0f;
        int held = 0, valid = 0;
#pragma unroll
        for (int kh = 0; kh < kPoolKH; ++kh)
#pragma unroll
            for (int kw = 0; kw < kPoolKW; ++kw) {
                const int oh = h0 + kh, ow = w0 + kw;
                if (oh < 0 || oh >= kOutH || ow < 0 || ow >= kOutW) continue;
                ++valid;
                if (oh < oh0 || oh >= oh1 || ow < ow0 || ow >= ow1) continue;
                ++held;
                const float x = sC[n * kLdC + (oh - oh0) * kTileW + (ow - ow0)];
                v = kPoolMax ? fmaxf(v, x) : v + x;
            }
        if (held == 0) continue;
        if constexpr (!kPoolMax) v /= float(pool_count(h0, w0));
        float *dst = out + (((long long)b * kOutC + n0 + n) * kPoolOutH + ph) * kPoolOutW + pw;
        if (held == valid) *dst = v; // the whole window is in this block
        else if constexpr (kPoolMax) atomic_max_float(dst, v);
        else atomicAdd(dst, v);
    }
}
