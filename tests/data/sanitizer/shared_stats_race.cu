// For the softmax problem. Thread 0 of each block writes the row's max and sum to shared memory,
// and the other threads read them without a __syncthreads() in between: a read-after-write race
// on shared memory that compute-sanitizer racecheck reports (the gate's verdict: racy).
// @launch softmax_racy_stats grid(x.shape[0]) block(256) args(x, out, i32(x.shape[1]))
extern "C" __global__ void softmax_racy_stats(const float *__restrict__ x, float *__restrict__ out, int n)
{
    constexpr int kThreads = 256;
    __shared__ float stats[2];
    const float *in = x + static_cast<long long>(blockIdx.x) * n;
    float *o = out + static_cast<long long>(blockIdx.x) * n;
    if (threadIdx.x == 0) {
        float rowMax = in[0];
        for (int j = 1; j < n; ++j)
            rowMax = fmaxf(rowMax, in[j]);
        float sum = 0.0f;
        for (int j = 0; j < n; ++j)
            sum += expf(in[j] - rowMax);
        stats[0] = rowMax;
        stats[1] = sum;
    }
    // The missing __syncthreads(): the other threads may read stats before thread 0 wrote them.
    for (int j = threadIdx.x; j < n; j += kThreads)
        o[j] = expf(in[j] - stats[0]) / stats[1];
}
