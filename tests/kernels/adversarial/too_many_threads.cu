// @expect launch error
// @problem softmax
// Asks for block(2048): more than the 1024 threads a block may have on any current GPU. The
// file compiles and the directives parse, but the driver refuses the launch
// (CUDA_ERROR_INVALID_VALUE / cudaErrorInvalidConfiguration). That error is not sticky, so the
// worker stays usable.
// @precision fp32
// @launch copy_rows grid(x.shape[0]) block(2048) args(x, out, i32(x.shape[1]))

extern "C" __global__ void copy_rows(const float* __restrict__ x, float* __restrict__ out, int n)
{
    const float* row_in = x + (size_t)blockIdx.x * n;
    float* row_out = out + (size_t)blockIdx.x * n;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        row_out[i] = row_in[i];
}
