// For the softmax problem. Two kernels, correct on every trial; the second also reads one element
// past the end of x. The gate's filter names both kernels (a regex alternation), so memcheck must
// see the second one and the gate must demote it (verdict sanitizer).
// @scratch stats float32 x.shape[0]*2
// @launch row_stats grid(cdiv(x.shape[0], 32)) block(32) args(x, stats, i32(x.shape[0]), i32(x.shape[1]))
// @launch normalize_reads_past grid(cdiv(x.numel, 256)) block(256) args(x, stats, out, i32(x.shape[1]), i32(x.numel))
extern "C" __global__ void row_stats(const float *__restrict__ x, float *stats, int rows, int n)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows)
        return;
    const float *in = x + static_cast<long long>(row) * n;
    float rowMax = in[0];
    for (int j = 1; j < n; ++j)
        rowMax = fmaxf(rowMax, in[j]);
    float sum = 0.0f;
    for (int j = 0; j < n; ++j)
        sum += expf(in[j] - rowMax);
    stats[2 * row] = rowMax;
    stats[2 * row + 1] = sum;
}

extern "C" __global__ void normalize_reads_past(const float *__restrict__ x, const float *stats, float *out, int n,
                                                int total)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= total)
        return;
    const int row = i / n;
    const float never = i == 0 && x[total] == 1234567.0f ? 1.0f : 0.0f; // x[total] is out of bounds
    out[i] = expf(x[i] - stats[2 * row]) / stats[2 * row + 1] + never;
}
