// The mma.sync GEMM kernel (see mma_gemm_tiles): blocks walk the output in L2 groups, a
// kStages-deep cp.async pipeline feeds mma_stage, and with kPromote > 0 each kPromote K tiles
// summed on the tensor cores (whose fp32 accumulation truncates) are added to an fp32 register sum.
constexpr bool kSeparateSum = kPromote > 0 && kTilesK > kPromote; // K is longer than one chunk

// Adds a finished tensor-core chunk to the fp32 sum and starts the next chunk from zero.
__device__ __forceinline__ void promote(float (&sum)[kFragsM][kFragsN][4], float (&acc)[kFragsM][kFragsN][4])
{
#pragma unroll
    for (int i = 0; i < kFragsM; ++i)
#pragma unroll
        for (int j = 0; j < kFragsN; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                sum[i][j][r] += acc[i][j][r];
                acc[i][j][r] = 0.f;
            }
}

// ---- the kernel ----
extern "C" __global__ void __launch_bounds__(kThreads, kMinBlocks)
{{KERNEL}}(const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C{{EPILOGUE_PARAMS}})
{
    extern __shared__ __align__(128) float smem[];

    // Block -> output tile, kGroupM block-rows at a time so that they share B panels in L2.
    const int tile = blockIdx.x;
    const int group = tile / (kGroupM * kTilesN);
    const int firstM = group * kGroupM;
    const int groupRows = min(kTilesM - firstM, kGroupM);
    const int tileM = firstM + (tile % (kGroupM * kTilesN)) % groupRows;
    const int tileN = (tile % (kGroupM * kTilesN)) / groupRows;
    const int m0 = tileM * kBM, n0 = tileN * kBN;
    const int batch = blockIdx.z;
    A += batch * kBatchStrideA;
    B += batch * kBatchStrideB;
    C += batch * kBatchStrideC;

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int warpRow = (warp % kWarpsM) * kWM, warpCol = (warp / kWarpsM) * kWN;

    float acc[kFragsM][kFragsN][4] = {};
    float sum[kFragsM][kFragsN][4] = {}; // used only with a separate sum; otherwise optimised away

    // Pipeline: kStages-1 tiles in flight while one is multiplied.
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
        if (s < kTilesK) {
            load_tile_a(smem + s * kStageFloats, A, m0, s * kBK);
            load_tile_b(smem + s * kStageFloats + kStageA, B, n0, s * kBK);
        }
        cp_async_commit();
    }
    for (int kt = 0; kt < kTilesK; ++kt) {
        cp_async_wait<kStages - 2>(); // tile kt has landed
        __syncthreads();              // ...for every thread, and the stage read last step is free
        const int next = kt + kStages - 1;
        if (next < kTilesK) {
            float *stage = smem + (next % kStages) * kStageFloats;
            load_tile_a(stage, A, m0, next * kBK);
            load_tile_b(stage + kStageA, B, n0, next * kBK);
        }
        cp_async_commit();
        const float *stage = smem + (kt % kStages) * kStageFloats;
        mma_stage(acc, stage, stage + kStageA, warpRow, warpCol, lane);
        if constexpr (kSeparateSum)
            if ((kt + 1) % kPromote == 0 || kt + 1 == kTilesK) promote(sum, acc);
    }
    cp_async_wait<0>();
    if constexpr (kSeparateSum) promote(acc, sum); // the total, back where the epilogue reads it

    // Epilogue: a function of acc, row, col and batch. Accumulator (i, j, r) sits at row
    // g (+8 for r >= 2) and column 2t (+1 for odd r) of its 16x8 tile.
    const auto epilogue = [&](float acc, int row, int col) -> float { return {{EPILOGUE}}; };
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < kFragsM; ++i)
#pragma unroll
        for (int j = 0; j < kFragsN; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = m0 + warpRow + i * kMmaM + g + 8 * h;
                const int col = n0 + warpCol + j * kMmaN + 2 * t;
                if (row >= kM || col >= kN) continue;
                float *dst = C + (long long)row * kN + col;
                const float v0 = epilogue(acc[i][j][2 * h], row, col);
                if (col + 1 >= kN) {
                    dst[0] = v0;
                } else if constexpr (kN % 2 == 0 && kBatchStrideC % 2 == 0) {
                    const float v1 = epilogue(acc[i][j][2 * h + 1], row, col + 1);
                    *reinterpret_cast<float2 *>(dst) = make_float2(v0, v1); // 8-byte aligned: col is even
                } else {
                    dst[0] = v0;
                    dst[1] = epilogue(acc[i][j][2 * h + 1], row, col + 1);
                }
            }
}
