// @expect crashed
// @problem softmax
// Each thread reads x 2^40 elements (4 TiB) past its own element and stores what it read, so
// the load cannot be optimised away. No allocation is mapped there: the first load raises an
// illegal-address fault (cudaErrorIllegalAddress, 700), which poisons the CUDA context. The
// engine must record "crashed" and start a fresh worker.
// @precision fp32
// @launch read_far grid(cdiv(out.numel, 256)) block(256) args(x, out, i64(out.numel))

constexpr long long kFarOffset = 1ll << 40;  // elements past the end of x

extern "C" __global__ void read_far(const float* __restrict__ x, float* __restrict__ out, long long n)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = x[i + kFarOffset];
}
