// @expect launch error
// @problem softmax
// The kernel takes three parameters (x, out, n) but the @launch passes two (x, out). The file
// compiles; the engine must compare the launch's argument list with the kernel's parameters
// (cuFuncGetParamInfo gives their count and sizes) and refuse the launch with an error naming
// the kernel, instead of handing the driver too short an argument array.
// @precision fp32
// @launch softmax_rows grid(x.shape[0]) block(512) args(x, out)

extern "C" __global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ out, int n)
{
    const float* row_in = x + (size_t)blockIdx.x * n;
    float* row_out = out + (size_t)blockIdx.x * n;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        row_out[i] = row_in[i];  // the body does not matter: it never runs
}
