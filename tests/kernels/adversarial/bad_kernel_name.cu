// @expect compile error
// @problem softmax
// The @launch names softmax_rows_v2, but the file defines only softmax_rows. Kernel names are
// resolved through NVRTC's lowered names (nvrtcAddNameExpression before the compile), so the
// unknown name makes the compile fail ("identifier ... is undefined"); nothing is launched.
// @precision fp32
// @launch softmax_rows_v2 grid(x.shape[0]) block(512) args(x, out, i32(x.shape[1]))

extern "C" __global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ out, int n)
{
    const float* row_in = x + (size_t)blockIdx.x * n;
    float* row_out = out + (size_t)blockIdx.x * n;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        row_out[i] = row_in[i];
}
