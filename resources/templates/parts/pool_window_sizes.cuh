// The pooling templates' geometry: volumes, window, stride, padding, dilation, and how to reduce.
constexpr long long kPlanes = {{PLANES}};            // batch x channels
constexpr int kD = {{IN_D}}, kH = {{IN_H}}, kW = {{IN_W}};     // input volume
constexpr int kOD = {{OUT_D}}, kOH = {{OUT_H}}, kOW = {{OUT_W}}; // output volume
constexpr int kKD = {{KD}}, kKH = {{KH}}, kKW = {{KW}};        // window
constexpr int kSD = {{STRIDE_D}}, kSH = {{STRIDE_H}}, kSW = {{STRIDE_W}};
constexpr int kPD = {{PAD_D}}, kPH = {{PAD_H}}, kPW = {{PAD_W}};
constexpr int kDD = {{DIL_D}}, kDH = {{DIL_H}}, kDW = {{DIL_W}};
constexpr bool kMax = {{MAX}};                       // max pooling; else average
constexpr bool kCountPad = {{COUNT_PAD}};            // average: padded taps count in the divisor
constexpr int kDivisor = {{DIVISOR}};                // average: a fixed divisor, 0 when none
constexpr int kBlock = {{BLOCK}};                    // threads per block

// A tap merged into a window's running value: the maximum (NaN wins, as in PyTorch) or the sum.
__device__ __forceinline__ float merge(float acc, float v)
{
    if constexpr (kMax)
        return (v > acc || v != v) ? v : acc;
    else
        return acc + v;
}

// PyTorch's divisor of an average over the window that starts at (d0, h0, w0): a fixed one, or the
// window clipped to the padded input, or to the input itself.
__device__ __forceinline__ int window_count(int d0, int h0, int w0)
{
    if (kDivisor != 0)
        return kDivisor;
    const int dEnd = min(d0 + kKD, kD + kPD), hEnd = min(h0 + kKH, kH + kPH), wEnd = min(w0 + kKW, kW + kPW);
    return kCountPad ? (dEnd - d0) * (hEnd - h0) * (wEnd - w0)
                     : (min(dEnd, kD) - max(d0, 0)) * (min(hEnd, kH) - max(h0, 0)) * (min(wEnd, kW) - max(w0, 0));
}
