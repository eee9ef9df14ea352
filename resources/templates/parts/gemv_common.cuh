// Shared by the matrix-vector templates: the product's sizes, where a thread's sum goes, and the
// kernel that combines the split-K partials (doubles).
constexpr int kM = {{M}}, kN = {{N}}, kK = {{K}};
constexpr long long kBatchStrideA = {{A_BATCH_STRIDE}}; // elements between batches (0: shared)
constexpr long long kBatchStrideB = {{B_BATCH_STRIDE}};
constexpr long long kBatchStrideC = {{C_BATCH_STRIDE}};
constexpr int kBatch = {{BATCH}};
constexpr bool kTransB = {{TRANS_B}};                    // B stored [N, K] (a linear layer's weight)
constexpr int kSplit = {{SPLIT}};                        // slices of K, each a block of its own

// Output (row, col) of `batch` from slice `split`: its partial sum when K is split (splitk_combine
// finishes it), else the finished value. `epilogue(acc, row, col)` is the template's epilogue.
template <typename Epilogue>
__device__ __forceinline__ void put(double sum, int batch, int split, int row, int col, double* __restrict__ partials,
                                    float* __restrict__ C, const Epilogue& epilogue)
{
    if constexpr (kSplit > 1)
        partials[((long long)(split * kBatch + batch) * kM + row) * kN + col] = sum;
    else
        C[batch * kBatchStrideC + (long long)row * kN + col] = epilogue(float(sum), row, col);
}

using Partial = double;
constexpr int kSlices = kSplit;
{{>splitk_combine}}
