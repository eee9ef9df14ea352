// The pooling after a convolution, read from the conv result in scratch: one thread per pooled
// output; consecutive threads take consecutive outputs of a row, so the window reads of a warp
// cover a few contiguous stretches of the conv rows. Max pooling (padding never wins), or the
// average divided as PyTorch does: by the window clipped to the padded map, to the map itself
// (count_include_pad off), or by a fixed divisor.
constexpr bool kPoolMax = {{POOL_MAX}};
constexpr bool kPoolCountPad = {{POOL_COUNT_PAD}};
constexpr int kPoolDivisor = {{POOL_DIVISOR}}; // 0: none

extern "C" __global__ void __launch_bounds__(256)
pool_windows(const float *__restrict__ act, float *__restrict__ out)
{
    constexpr long long kCount = (long long)kBatch * kOutC * kPoolOutH * kPoolOutW;
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (!kPool || idx >= kCount) return;
    const int pw = idx % kPoolOutW, ph = (idx / kPoolOutW) % kPoolOutH;
    const long long plane = idx / ((long long)kPoolOutW * kPoolOutH); // b * OUT_C + channel
    const float *src = act + plane * kPixels;
    const int h0 = ph * kPoolSH - kPoolPadH, w0 = pw * kPoolSW - kPoolPadW;
    float v = kPoolMax ? -__int_as_float(0x7f800000) : 0.0f; // -inf: padding never wins
#pragma unroll
    for (int kh = 0; kh < (kPool ? kPoolKH : 1); ++kh)
#pragma unroll
        for (int kw = 0; kw < (kPool ? kPoolKW : 1); ++kw) {
            const int oh = h0 + kh, ow = w0 + kw;
            if (oh < 0 || oh >= kOutH || ow < 0 || ow >= kOutW) continue;
            const float x = __ldg(src + oh * kOutW + ow);
            v = kPoolMax ? fmaxf(v, x) : v + x;
        }
    if constexpr (!kPoolMax) {
        const int hEnd = min(h0 + kPoolKH, kOutH + kPoolPadH), wEnd = min(w0 + kPoolKW, kOutW + kPoolPadW);
        const int count = kPoolDivisor ? kPoolDivisor
                          : kPoolCountPad ? (hEnd - h0) * (wEnd - w0)
                                          : (min(hEnd, kOutH) - max(h0, 0)) * (min(wEnd, kOutW) - max(w0, 0));
        v /= float(count);
    }
    out[idx] = v;
}
