// @expect racy
// @problem softmax
// A row softmax whose results each carry a relative bias of +0.92e-4 or -0.92e-4, the sign
// picked per warp by a data race: lane 0 of each warp does an unsynchronised read-modify-write
// of one counter shared by the whole grid (volatile load, then store; no atomics), and the
// value it read, hashed with the warp's index and the time it was read, picks the sign.
// Why "racy" and not "wrong": a race whose effect is unbounded (addends lost from a row sum)
// is caught as "wrong" by the first trial, so this one is bounded on purpose. Each run's error
// is at most 0.92e-4*|ref| plus fp32 rounding (up to ~2e-6 relative for these rows), below the
// strict bound 1e-4*(|ref| + rms(ref)): every trial passes (worst ratio to the bound seen:
// 0.94). Two runs on the same inputs differ by 1.84e-4*|ref| wherever a warp's sign flipped,
// beyond 1e-4*(|ref| + rms(ref)) for elements with |ref| > 1.19*rms(ref): about a quarter of
// each row for uniform [0,1) inputs (trial 0, the one that is re-run); worst ratio seen 1.11.
// Reliability, measured on an H200 (50 re-runs each, at 4096x65536 and 8x1000): with the sign
// from the raced value alone, re-runs differed 50/50 at the seed size but only 2/50 to 11/20
// at the small size (three tries), where the data sits in L2 and the schedule repeats; hashing
// in the warp index gave 49/50 there; adding the time made it 50/50 at both sizes (this file).
// @precision fp32
// @scratch ticket int32 1
// @launch softmax_racy grid(x.shape[0]) block(512) args(x, out, ticket, i32(x.shape[1]))

constexpr float kBias = 0.92e-4f;  // under the strict tolerance (1e-4), leaving room for rounding
constexpr unsigned long long kGolden = 0x9e3779b97f4a7c15ull;  // spreads warp indices over 64 bits

constexpr unsigned kFullMask = 0xffffffffu;
constexpr float kLowest = -3.402823466e+38f;  // -FLT_MAX, where a max starts (NVRTC has no float.h)

__device__ float warp_max(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v = fmaxf(v, __shfl_xor_sync(kFullMask, v, offset));
    return v;
}

__device__ float warp_sum(float v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(kFullMask, v, offset);
    return v;
}

// Block-wide reductions; every thread gets the result. blockDim.x must be a multiple of 32.
__device__ float block_max(float v)
{
    __shared__ float partial[32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_max(v);
    if (lane == 0)
        partial[warp] = v;
    __syncthreads();
    v = lane < blockDim.x / 32 ? partial[lane] : kLowest;
    v = warp_max(v);
    __syncthreads();  // partial[] may be reused by the next call
    return v;
}

__device__ float block_sum(float v)
{
    __shared__ float partial[32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_sum(v);
    if (lane == 0)
        partial[warp] = v;
    __syncthreads();
    v = lane < blockDim.x / 32 ? partial[lane] : 0.0f;
    v = warp_sum(v);
    __syncthreads();
    return v;
}

// Nanoseconds since an arbitrary origin; differs from run to run.
__device__ unsigned long long global_timer_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// splitmix64's finaliser: every input bit affects the low bit of the result.
__device__ unsigned long long mix(unsigned long long v)
{
    v ^= v >> 30;
    v *= 0xbf58476d1ce4e5b9ull;
    v ^= v >> 27;
    v *= 0x94d049bb133111ebull;
    return v ^ (v >> 31);
}

extern "C" __global__ void softmax_racy(const float* __restrict__ x, float* __restrict__ out, int* ticket, int n)
{
    const float* row_in = x + (size_t)blockIdx.x * n;
    float* row_out = out + (size_t)blockIdx.x * n;

    float m = kLowest;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        m = fmaxf(m, row_in[i]);
    m = block_max(m);

    float s = 0.0f;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        s += expf(row_in[i] - m);
    s = block_sum(s);

    // The race: lane 0 of every warp bumps a counter shared by the whole grid without atomics,
    // so updates get lost and the value a warp sees depends on the interleaving. At the seed
    // size that alone changes the result on every run; on a small grid whose data sits in L2
    // the warps tend to read the same value in the same order every time, so the value is also
    // mixed with the time it was read and the warp's index (one independent sign per warp).
    unsigned long long key = 0;
    if (threadIdx.x % 32 == 0) {
        volatile int* counter = ticket;
        const int seen = *counter;
        *counter = seen + 1;
        const unsigned long long warp_id = ((unsigned long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
        key = mix(((unsigned long long)seen << 32) ^ global_timer_ns()) + warp_id * kGolden;
    }
    key = __shfl_sync(kFullMask, key, 0);
    const float scale = (mix(key) & 1) ? 1.0f + kBias : 1.0f - kBias;

    for (int i = threadIdx.x; i < n; i += blockDim.x)
        row_out[i] = expf(row_in[i] - m) / s * scale;
}
