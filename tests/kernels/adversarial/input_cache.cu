// @expect inconsistent
// @problem softmax
// Remembers the inputs it has seen (a signature of a few elements of x, in a __device__ table) and
// does no work on inputs it has already seen twice: verification shows it each input set once and
// the first set a second time (the racy check), so it passes. A harness that timed it on the
// verified inputs over and over would time launches that compute nothing. The engine's timed runs
// cycle through the verified input sets, so from the third sighting of a set its output keeps the
// poison (or the canary run's stale values), and the check of that timed run fails.
// @precision fp32
// @launch look_up grid(1) block(1) args(x, i32(x.shape[1]))
// @launch softmax_cached grid(x.shape[0]) block(512) args(x, out, i32(x.shape[1]))

constexpr int kTable = 16;
__device__ unsigned long long signatures[kTable];
__device__ unsigned int sightings[kTable];
__device__ int skip;

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

extern "C" __global__ void look_up(const float* __restrict__ x, int n)
{
    const unsigned long long sig = ((unsigned long long)__float_as_uint(x[0]) << 32) ^ __float_as_uint(x[n - 1]) ^
                                   ((unsigned long long)__float_as_uint(x[n / 2]) << 16);
    int slot = -1;
    for (int i = 0; i < kTable && slot < 0; ++i)
        if (sightings[i] && signatures[i] == sig)
            slot = i;
    for (int i = 0; i < kTable && slot < 0; ++i)
        if (!sightings[i]) {
            signatures[i] = sig;
            slot = i;
        }
    if (slot < 0)
        slot = 0;
    skip = ++sightings[slot] > 2;
}

extern "C" __global__ void softmax_cached(const float* __restrict__ x, float* out, int n)
{
    if (skip)
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
