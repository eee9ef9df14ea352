// @expect inconsistent
// @problem softmax
// Counts its launches in a __device__ variable and does no work from the ninth launch of its
// module on: verification launches it six times (five trials and the repeated first one), so it
// passes, and a harness that timed it on the same module would time launches that compute
// nothing. The engine loads the module afresh for timing (the count starts again at 0), but after
// the three warm-ups the timed runs pass eight launches too, and their outputs keep the poison (or
// the canary run's stale values): the check of the timed run fails.
// @precision fp32
// @launch count_launch grid(1) block(1) args()
// @launch softmax_counted grid(x.shape[0]) block(512) args(x, out, i32(x.shape[1]))

__device__ unsigned int launches;

constexpr unsigned kFullMask = 0xffffffffu;
constexpr float kLowest = -3.402823466e+38f;

__device__ float block_reduce(float v, bool is_max)
{
    __shared__ float partial[32];
    for (int o = 16; o > 0; o >>= 1) {
        const float other = __shfl_xor_sync(kFullMask, v, o);
        v = is_max ? fmaxf(v, other) : v + other;
    }
    if (threadIdx.x % 32 == 0)
        partial[threadIdx.x / 32] = v;
    __syncthreads();
    v = threadIdx.x % 32 < blockDim.x / 32 ? partial[threadIdx.x % 32] : (is_max ? kLowest : 0.0f);
    for (int o = 16; o > 0; o >>= 1) {
        const float other = __shfl_xor_sync(kFullMask, v, o);
        v = is_max ? fmaxf(v, other) : v + other;
    }
    __syncthreads();
    return v;
}

extern "C" __global__ void count_launch() { ++launches; }

extern "C" __global__ void softmax_counted(const float* __restrict__ x, float* out, int n)
{
    if (launches > 8)
        return;
    const float* row_in = x + (size_t)blockIdx.x * n;
    float* row_out = out + (size_t)blockIdx.x * n;
    float m = kLowest;
    for (int i = threadIdx.x; i < n; i += blockDim.x) m = fmaxf(m, row_in[i]);
    m = block_reduce(m, true);
    float s = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) s += expf(row_in[i] - m);
    s = block_reduce(s, false);
    for (int i = threadIdx.x; i < n; i += blockDim.x) row_out[i] = expf(row_in[i] - m) / s;
}
