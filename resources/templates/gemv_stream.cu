// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// A product with a few rows (a vector times a matrix, a small batch through a layer): the
// product is bound by reading B [K x N] once, and B's rows are contiguous in N. So each thread
// takes 4 adjacent columns (a 16-byte load of each row of B it passes) and walks down K, with
// the kM values of A at each k (the same address in every lane, one broadcast load) multiplied
// in: kM x 4 float sums, added to double sums every kFlush steps so that long columns lose no
// digits. With kSplit > 1, K is cut into kSplit slices handled by different blocks (enough blocks
// for every SM when N is narrow); their partials go to scratch and splitk_combine adds them in a
// fixed order and applies the epilogue.
//
// @problem {{PROBLEM}}
// @precision fp32
// @scratch partials float64 {{PARTIAL_WORDS}} uninitialized
// @launch gemv_stream grid({{GRID}}, {{SPLIT}}, {{BATCH}}) block({{BLOCK}}) args({{A}}, {{B}}, partials, {{OUT}}{{EPILOGUE_ARGS}})
{{#SPLITK}}
// @launch splitk_combine grid({{COMBINE_GRID}}) block(256) args(partials, {{OUT}}{{EPILOGUE_ARGS}})
{{/SPLITK}}

{{>gemv_common}}
constexpr int kBlock = {{BLOCK}};              // threads per block, 4 columns each
constexpr int kFlush = 16;                     // k steps summed in float before a double add
constexpr bool kVec4 = kN % 4 == 0 && kBatchStrideB % 4 == 0;
constexpr int kCols = kVec4 ? 4 : 1;           // columns per thread
constexpr long long kChunkK = (kK + kSplit - 1) / kSplit; // K per slice
static_assert(!kTransB && kM >= 1 && kM <= 8, "up to 8 rows of A, B stored [K, N]");

extern "C" __global__ void __launch_bounds__(kBlock)
gemv_stream(const float* __restrict__ A, const float* __restrict__ B,
            double* __restrict__ partials,
            float* __restrict__ C{{EPILOGUE_PARAMS}})
{
    const int col0 = (blockIdx.x * kBlock + threadIdx.x) * kCols;
    const int split = blockIdx.y, batch = blockIdx.z;
    if (col0 >= kN)
        return;
    const float* a = A + batch * kBatchStrideA;
    const float* b = B + batch * kBatchStrideB + col0;
    const long long k0 = split * kChunkK, k1 = k0 + kChunkK < kK ? k0 + kChunkK : kK;

    double sum[kM][kCols];
    float part[kM][kCols];
#pragma unroll
    for (int m = 0; m < kM; ++m)
#pragma unroll
        for (int c = 0; c < kCols; ++c)
            sum[m][c] = 0.0, part[m][c] = 0.0f;
    for (long long k = k0; k < k1; k += kFlush) {
#pragma unroll 4
        for (int s = 0; s < kFlush; ++s) {
            if (k + s >= k1)
                break;
            float bv[kCols];
            if constexpr (kVec4) {
                const float4 f = __ldcs(reinterpret_cast<const float4*>(b + (k + s) * kN));
                bv[0] = f.x, bv[1] = f.y, bv[2] = f.z, bv[3] = f.w;
            } else {
                bv[0] = __ldcs(b + (k + s) * kN);
            }
#pragma unroll
            for (int m = 0; m < kM; ++m) {
                const float av = __ldg(a + (long long)m * kK + k + s);
#pragma unroll
                for (int c = 0; c < kCols; ++c)
                    part[m][c] += av * bv[c];
            }
        }
#pragma unroll
        for (int m = 0; m < kM; ++m)
#pragma unroll
            for (int c = 0; c < kCols; ++c)
                sum[m][c] += part[m][c], part[m][c] = 0.0f;
    }

    const auto epilogue = [&](float acc, int row, int col) -> float { return {{EPILOGUE}}; };
#pragma unroll
    for (int row = 0; row < kM; ++row)
#pragma unroll
        for (int c = 0; c < kCols; ++c)
            put(sum[row][c], batch, split, row, col0 + c, partials, C, epilogue);
}
