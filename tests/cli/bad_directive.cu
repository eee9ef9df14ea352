// A candidate whose launch directive is malformed on line 3.
// @precision fp32
// @launch softmax_rows grid(x.shape[0] block(256) args(x, out)
extern "C" __global__ void softmax_rows(const float* x, float* out) {}
