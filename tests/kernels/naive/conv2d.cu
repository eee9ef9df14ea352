// @expect correct
// @problem conv2d
// Direct convolution (torch.conv2d with bias, stride STRIDE, zero padding PAD), one thread
// per output element. Each output is bias + a C*R*S-long fp32 dot product (363 terms at the
// seed size), accumulated with FMA: comfortably inside the strict tolerance. All sizes come
// from the tensors' shapes and the problem's STRIDE/PAD constants.
// @precision fp32
// @launch conv2d_direct grid(cdiv(out.numel, 256)) block(256) args(x, weight, bias, out, i32(x.shape[0]), i32(x.shape[1]), i32(x.shape[2]), i32(x.shape[3]), i32(weight.shape[0]), i32(weight.shape[2]), i32(weight.shape[3]), i32(STRIDE), i32(PAD), i32(out.shape[2]), i32(out.shape[3]))

extern "C" __global__ void conv2d_direct(const float* __restrict__ x, const float* __restrict__ w,
                                         const float* __restrict__ bias, float* __restrict__ out,
                                         int batch, int in_c, int in_h, int in_w,
                                         int out_c, int k_h, int k_w, int stride, int pad,
                                         int out_h, int out_w)
{
    const long long total = (long long)batch * out_c * out_h * out_w;
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= total)
        return;

    // idx = ((b * out_c + k) * out_h + oh) * out_w + ow
    const int ow = (int)(idx % out_w);
    const int oh = (int)((idx / out_w) % out_h);
    const int k = (int)((idx / ((long long)out_w * out_h)) % out_c);
    const int b = (int)(idx / ((long long)out_w * out_h * out_c));

    const int ih0 = oh * stride - pad;
    const int iw0 = ow * stride - pad;
    float acc = bias[k];
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
    out[idx] = acc;
}
