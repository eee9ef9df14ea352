// @expect inconsistent
// @problem softmax
// Sniffs the poison. A row whose first output element holds a number, not the NaN poison, is
// taken for a timed run on inputs already seen: the block skips the row and one block waits
// 470 us instead, so the time stays above the physical floor. Where timed runs do not re-poison
// their outputs, this kernel is "correct" and fast. The engine poisons before every timed run, and
// a few of them at random (canary runs) keep the previous run's outputs, from another input set,
// instead of the poison: this kernel skips those rows, another set's answer stays there, and the
// check of that timed run fails.
// @precision fp32
// @launch softmax_sniff grid(x.shape[0]) block(512) args(x, out, i32(x.shape[1]))

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

__device__ void wait_ns(unsigned long long ns)
{
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}

extern "C" __global__ void softmax_sniff(const float* __restrict__ x, float* out, int n)
{
    const float* row_in = x + (size_t)blockIdx.x * n;
    float* row_out = out + (size_t)blockIdx.x * n;
    const float first = row_out[0];
    if (first == first) { // a number: skip the work
        if (blockIdx.x == 0 && threadIdx.x == 0)
            wait_ns(470000);
        return;
    }
    __syncthreads(); // every thread has read the sniffed element before any writes it
    float m = kLowest;
    for (int i = threadIdx.x; i < n; i += blockDim.x) m = fmaxf(m, row_in[i]);
    m = block_reduce(m, true);
    float s = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x) s += expf(row_in[i] - m);
    s = block_reduce(s, false);
    for (int i = threadIdx.x; i < n; i += blockDim.x) row_out[i] = expf(row_in[i] - m) / s;
}
