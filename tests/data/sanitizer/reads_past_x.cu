// For the softmax problem. Correct on every trial, but it also reads x[B * N], one element past the
// end of x, and never uses the value. Verification cannot see that (the read lands inside a block
// of libtorch's caching allocator); compute-sanitizer memcheck can, because the gate's worker gives
// every tensor an allocation of its own. The gate must demote it (verdict sanitizer).
// @launch softmax_reads_past grid(cdiv(x.shape[0], 32)) block(32) args(x, out, i32(x.shape[0]), i32(x.shape[1]))
extern "C" __global__ void softmax_reads_past(const float *__restrict__ x, float *__restrict__ out, int rows, int n)
{
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= rows)
        return;
    const float *in = x + static_cast<long long>(row) * n;
    float *o = out + static_cast<long long>(row) * n;
    float rowMax = in[0];
    for (int j = 1; j < n; ++j)
        rowMax = fmaxf(rowMax, in[j]);
    float sum = 0.0f;
    for (int j = 0; j < n; ++j)
        sum += expf(in[j] - rowMax);
    const float past = x[static_cast<long long>(rows) * n]; // out of bounds
    const float never = past == 1234567.0f ? 1.0f : 0.0f;   // keeps the load; always 0 in practice
    for (int j = 0; j < n; ++j)
        o[j] = expf(in[j] - rowMax) / sum + never;
}
