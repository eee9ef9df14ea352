// Max pooling (padding never wins), or the average divided as PyTorch does: by the window clipped
// to the padded map, to the map itself (count_include_pad off), or by a fixed divisor.
constexpr bool kPoolMax = {{POOL_MAX}};
constexpr bool kPoolCountPad = {{POOL_COUNT_PAD}};
constexpr int kPoolDivisor = {{POOL_DIVISOR}}; // 0: none

// The average's divisor for the window whose corner is (h0, w0) on the conv map.
__device__ __forceinline__ int pool_count(int h0, int w0)
{
    const int hEnd = min(h0 + kPoolKH, kOutH + kPoolPadH), wEnd = min(w0 + kPoolKW, kOutW + kPoolPadW);
    return kPoolDivisor ? kPoolDivisor
           : kPoolCountPad ? (hEnd - h0) * (wEnd - w0)
                           : (min(hEnd, kOutH) - max(h0, 0)) * (min(wEnd, kOutW) - max(w0, 0));
}
