// @expect correct
// @problem conv2d_relu_maxpool
// Conv2d (stride STRIDE, pad PAD, bias) -> ReLU -> max_pool2d(kernel 3, stride 2), one thread
// per pooled output. The thread computes the 3x3 window of convolution outputs directly
// (recomputing the overlap with its neighbours: simple, not fast) and keeps their maximum,
// starting from 0, which is exactly ReLU of the maximum. Pooling has no padding and floors,
// so every window lies inside the convolution output. fp32 throughout: strict tolerance.
// @precision fp32
// @launch conv_relu_maxpool grid(cdiv(out.numel, 256)) block(256) args(x, weight, bias, out, i32(x.shape[0]), i32(x.shape[1]), i32(x.shape[2]), i32(x.shape[3]), i32(weight.shape[0]), i32(weight.shape[2]), i32(weight.shape[3]), i32(STRIDE), i32(PAD), i32(out.shape[2]), i32(out.shape[3]))

constexpr int kPoolSize = 3;    // max_pool2d kernel
constexpr int kPoolStride = 2;  // max_pool2d stride

// One convolution output (batch b, filter k, position oh, ow), bias included.
__device__ float conv_at(const float* __restrict__ x, const float* __restrict__ w, float bias,
                         int b, int k, int oh, int ow, int in_c, int in_h, int in_w,
                         int k_h, int k_w, int stride, int pad)
{
    const int ih0 = oh * stride - pad;
    const int iw0 = ow * stride - pad;
    float acc = bias;
    for (int c = 0; c < in_c; ++c) {
        const float* x_plane = x + ((size_t)b * in_c + c) * in_h * in_w;
        const float* w_plane = w + ((size_t)k * in_c + c) * k_h * k_w;
        for (int r = 0; r < k_h; ++r) {
            const int ih = ih0 + r;
            if (ih < 0 || ih >= in_h)
                continue;
            for (int s = 0; s < k_w; ++s) {
                const int iw = iw0 + s;
                if (iw < 0 || iw >= in_w)
                    continue;
                acc = fmaf(x_plane[(size_t)ih * in_w + iw], w_plane[r * k_w + s], acc);
            }
        }
    }
    return acc;
}

extern "C" __global__ void conv_relu_maxpool(const float* __restrict__ x, const float* __restrict__ w,
                                             const float* __restrict__ bias, float* __restrict__ out,
                                             int batch, int in_c, int in_h, int in_w,
                                             int out_c, int k_h, int k_w, int stride, int pad,
                                             int pool_h, int pool_w)
{
    const long long total = (long long)batch * out_c * pool_h * pool_w;
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= total)
        return;

    // idx = ((b * out_c + k) * pool_h + ph) * pool_w + pw
    const int pw = (int)(idx % pool_w);
    const int ph = (int)((idx / pool_w) % pool_h);
    const int k = (int)((idx / ((long long)pool_w * pool_h)) % out_c);
    const int b = (int)(idx / ((long long)pool_w * pool_h * out_c));

    float best = 0.0f;  // ReLU: max(0, max over the window)
    for (int i = 0; i < kPoolSize; ++i)
        for (int j = 0; j < kPoolSize; ++j)
            best = fmaxf(best, conv_at(x, w, bias[k], b, k, ph * kPoolStride + i, pw * kPoolStride + j,
                                       in_c, in_h, in_w, k_h, k_w, stride, pad));
    out[idx] = best;
}
