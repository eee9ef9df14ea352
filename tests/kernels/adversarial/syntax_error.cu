// @expect compile error
// @problem softmax
// A row copy with two syntax errors: a missing semicolon after the row pointer and an
// unbalanced parenthesis in the loop. NVRTC rejects it; the compile log names the lines.
// @precision fp32
// @launch copy_rows grid(x.shape[0]) block(256) args(x, out, i32(x.shape[1]))

extern "C" __global__ void copy_rows(const float* __restrict__ x, float* __restrict__ out, int n)
{
    const float* row_in = x + (size_t)blockIdx.x * n
    float* row_out = out + (size_t)blockIdx.x * n;
    for (int i = threadIdx.x; i < n; i += blockDim.x
        row_out[i] = row_in[i];
}
