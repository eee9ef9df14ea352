// x * sigmoid(x), one element a thread in a grid-stride loop. 64-bit indices: the tensor has
// 1.6e9 elements (6.4 GB), past what a 32-bit byte offset can reach.
// @precision fp32
// @launch swish grid(4096) block(256) args(x, out, i64(x.numel))
extern "C" __global__ void swish(const float* __restrict__ x, float* __restrict__ out, long long n)
{
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float v = x[i];
        out[i] = v / (1.0f + expf(-v));
    }
}
