// Shared by the matrix-vector templates: the product's sizes, and the kernel that combines the
// split-K partials. The output is [batch][M][N] row-major; partials are [batch][split][M][N]
// doubles, summed in split order (the same result in every run) and finished by the epilogue, a
// function of acc, row, col and batch.
constexpr int kM = {{M}}, kN = {{N}}, kK = {{K}};
constexpr long long kBatchStrideA = {{A_BATCH_STRIDE}}; // elements between batches (0: shared)
constexpr long long kBatchStrideB = {{B_BATCH_STRIDE}};
constexpr long long kBatchStrideC = {{C_BATCH_STRIDE}};
constexpr int kBatch = {{BATCH}};
constexpr bool kTransB = {{TRANS_B}};                    // B stored [N, K] (a linear layer's weight)
constexpr int kSplit = {{SPLIT}};                        // slices of K, each a block of its own
constexpr int kCombineBlock = 256;
constexpr long long kOutputs = (long long)kBatch * kM * kN;

extern "C" __global__ void __launch_bounds__(kCombineBlock)
gemv_combine(const double* __restrict__ partials, float* __restrict__ C{{EPILOGUE_PARAMS}})
{
    const long long o = (long long)blockIdx.x * kCombineBlock + threadIdx.x;
    if (o >= kOutputs)
        return;
    const int batch = int(o / ((long long)kM * kN));
    const int row = int(o / kN % kM), col = int(o % kN);
    const double* p = partials + (long long)batch * kSplit * kM * kN + (long long)row * kN + col;
    double sum = 0.0;
    for (int s = 0; s < kSplit; ++s)
        sum += p[(long long)s * kM * kN];
    const float acc = float(sum);
    C[batch * kBatchStrideC + (long long)row * kN + col] = {{EPILOGUE}};
}
