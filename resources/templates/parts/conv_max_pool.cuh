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
