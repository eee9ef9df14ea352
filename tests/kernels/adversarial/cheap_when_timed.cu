// @expect inconsistent|wrong
// @problem softmax
// Switches to a cheaper, less accurate method when it believes it is timed: after eight launches
// in a row that each came less than 50 ms after the one before (as back-to-back timed runs do, even
// on a GPU that other processes share), the row sum reads only every fourth element and scales it
// by four, which saves a quarter of the reads and misses the strict tolerance. Verification's five
// trials never make such a streak; the timed runs do, from the ninth on, and every timed run is
// checked like a verified one, so a timed run fails its check (inconsistent). Were the verified
// launches to make the streak too, verification would see it (wrong). Either way no time is
// reported for the cheap path. (A 5 ms gap, as this kernel first used, missed the timed runs when
// other processes shared the GPU: the kernel then never took its cheap path, and the time reported
// was honestly that of the accurate one.)
// @precision fp32
// @launch clock_gap grid(1) block(1) args()
// @launch softmax_fast grid(x.shape[0]) block(512) args(x, out, i32(x.shape[1]))

__device__ unsigned long long last_launch;
__device__ int streak;
__device__ int timed;

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

extern "C" __global__ void clock_gap()
{
    unsigned long long now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    streak = last_launch != 0 && now - last_launch < 50000000ull ? streak + 1 : 0;
    timed = streak >= 8;
    last_launch = now;
}

extern "C" __global__ void softmax_fast(const float* __restrict__ x, float* out, int n)
{
    const float* row_in = x + (size_t)blockIdx.x * n;
    float* row_out = out + (size_t)blockIdx.x * n;
    float m = kLowest;
    for (int i = threadIdx.x; i < n; i += blockDim.x) m = fmaxf(m, row_in[i]);
    m = block_reduce(m, true);
    const int step = timed ? 4 : 1;
    float s = 0.0f;
    for (int i = threadIdx.x * step; i < n; i += blockDim.x * step) s += expf(row_in[i] - m);
    s = block_reduce(s, false) * (float)step;
    for (int i = threadIdx.x; i < n; i += blockDim.x) row_out[i] = expf(row_in[i] - m) / s;
}
