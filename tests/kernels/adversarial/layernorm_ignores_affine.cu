// @expect wrong
// @problem layernorm
// The naive two-pass LayerNorm (fp64 statistics) with the affine step left out: out is
// (x - mean) * rstd, and weight and bias are never read. Trial 0 initialises weight = 1 and
// bias = 0, so it passes; later trials draw random weight and bias (ones -> U(0.5, 1.5),
// zeros -> U(-0.5, 0.5)), and the output is then off by far more than the tolerance.
// The grid's second dimension (64 chunks) must not exceed the scratch's per-row count (64).
// @precision fp32
// @scratch sums float64 x.shape[0]*64
// @scratch sqdevs float64 x.shape[0]*64
// @launch ln_chunk_sum grid(x.shape[0], 64) block(256) args(x, sums, i64(x.numel / x.shape[0]))
// @launch ln_chunk_sqdev grid(x.shape[0], 64) block(256) args(x, sums, sqdevs, i64(x.numel / x.shape[0]))
// @launch ln_normalize_no_affine grid(x.shape[0], 64) block(256) args(x, sums, sqdevs, out, i64(x.numel / x.shape[0]))

constexpr double kEps = 1e-5;
constexpr unsigned kFullMask = 0xffffffffu;

__device__ double warp_sum(double v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(kFullMask, v, offset);
    return v;
}

// Block-wide sum; every thread gets the result. blockDim.x must be a multiple of 32.
__device__ double block_sum(double v)
{
    __shared__ double partial[32];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_sum(v);
    if (lane == 0)
        partial[warp] = v;
    __syncthreads();
    v = lane < blockDim.x / 32 ? partial[lane] : 0.0;
    v = warp_sum(v);
    __syncthreads();
    return v;
}

// The [begin, end) slice of a row that block (blockIdx.x, blockIdx.y) covers.
struct Chunk {
    long long begin, end;
};

__device__ Chunk my_chunk(long long row_len)
{
    const long long per_chunk = (row_len + gridDim.y - 1) / gridDim.y;
    const long long begin = min(row_len, (long long)blockIdx.y * per_chunk);
    return {begin, min(row_len, begin + per_chunk)};
}

// Sum of one row's per-chunk partials, always in the same order.
__device__ double row_total(const double* partials)
{
    const double* p = partials + (size_t)blockIdx.x * gridDim.y;
    double total = 0.0;
    for (unsigned c = 0; c < gridDim.y; ++c)
        total += p[c];
    return total;
}

extern "C" __global__ void ln_chunk_sum(const float* __restrict__ x, double* __restrict__ sums, long long row_len)
{
    const float* row = x + (size_t)blockIdx.x * row_len;
    const Chunk chunk = my_chunk(row_len);
    double acc = 0.0;
    for (long long i = chunk.begin + threadIdx.x; i < chunk.end; i += blockDim.x)
        acc += row[i];
    acc = block_sum(acc);
    if (threadIdx.x == 0)
        sums[(size_t)blockIdx.x * gridDim.y + blockIdx.y] = acc;
}

extern "C" __global__ void ln_chunk_sqdev(const float* __restrict__ x, const double* __restrict__ sums,
                                          double* __restrict__ sqdevs, long long row_len)
{
    const float* row = x + (size_t)blockIdx.x * row_len;
    const Chunk chunk = my_chunk(row_len);
    const double mean = row_total(sums) / row_len;
    double acc = 0.0;
    for (long long i = chunk.begin + threadIdx.x; i < chunk.end; i += blockDim.x) {
        const double d = row[i] - mean;
        acc += d * d;
    }
    acc = block_sum(acc);
    if (threadIdx.x == 0)
        sqdevs[(size_t)blockIdx.x * gridDim.y + blockIdx.y] = acc;
}

extern "C" __global__ void ln_normalize_no_affine(const float* __restrict__ x, const double* __restrict__ sums,
                                                  const double* __restrict__ sqdevs, float* __restrict__ out,
                                                  long long row_len)
{
    const size_t row_offset = (size_t)blockIdx.x * row_len;
    const Chunk chunk = my_chunk(row_len);
    const double mean = row_total(sums) / row_len;
    const double var = row_total(sqdevs) / row_len;
    const double rstd = 1.0 / sqrt(var + kEps);
    for (long long i = chunk.begin + threadIdx.x; i < chunk.end; i += blockDim.x)
        out[row_offset + i] = (float)((x[row_offset + i] - mean) * rstd);  // the bug: no weight, no bias
}
