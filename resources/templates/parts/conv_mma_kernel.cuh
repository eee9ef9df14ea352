// The kernel of conv_implicit_gemm_tf32 and _tf32x3 (see conv_mma_tiles), named by KERNEL; each
// template defines mma_stage, the product of one BK-deep slice.
// ---- the kernel ----
extern "C" __global__ void __launch_bounds__(kThreads, kMinBlocks)
{{KERNEL}}(const float *__restrict__ x, const float *__restrict__ w, float *__restrict__ out{{EPILOGUE_PARAMS}})
{
    extern __shared__ __align__(128) float smem[];
    int2 *taps = reinterpret_cast<int2 *>(smem + kStages * kStageFloats);
    int4 *rows = reinterpret_cast<int4 *>(taps + kKPadded);

    const int m0 = blockIdx.x * kBM, n0 = blockIdx.y * kBN;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int warpRow = (warp % kWarpsM) * kWM, warpCol = (warp / kWarpsM) * kWN;

    for (int k = threadIdx.x; k < kKPadded; k += kThreads) taps[k] = tap_entry(k);
    for (int r = threadIdx.x; r < kBM; r += kThreads) rows[r] = row_entry(m0 + r);
    __syncthreads();

    float acc[kFragsM][kFragsN][4] = {};

    // Pipeline: kStages-1 tiles in flight while one is multiplied.
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
        if (s < kTilesK) {
            load_tile_a(smem + s * kStageFloats, x, taps, rows, s * kBK);
            load_tile_b(smem + s * kStageFloats + kStageA, w, n0, s * kBK);
        }
        cp_async_commit();
    }
    for (int kt = 0; kt < kTilesK; ++kt) {
        cp_async_wait<kStages - 2>(); // tile kt has landed
        __syncthreads();              // ...for every thread, and the stage read last step is free
        const int next = kt + kStages - 1;
        if (next < kTilesK) {
            float *stage = smem + (next % kStages) * kStageFloats;
            load_tile_a(stage, x, taps, rows, next * kBK);
            load_tile_b(stage + kStageA, w, n0, next * kBK);
        }
        cp_async_commit();
        const float *stage = smem + (kt % kStages) * kStageFloats;
        mma_stage(acc, stage, stage + kStageA, warpRow, warpCol, lane);
    }
    cp_async_wait<0>();

    // Epilogue: a function of acc, row (the output pixel m) and col (the output channel), stored
    // into NCHW: out[b][col][p] with m = b*OH*OW + p. Eight consecutive pixels per 32-byte segment.
    const auto epilogue = [&](float acc, int row, int col) -> float { return {{EPILOGUE}}; };
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < kFragsM; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = m0 + warpRow + i * kMmaM + g + 8 * h;
            if (row >= kGemmM) continue;
            float *dst = out + (long long)(row / kPixels) * kOutC * kPixels + row % kPixels;
#pragma unroll
            for (int j = 0; j < kFragsN; ++j)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const int col = n0 + warpCol + j * kMmaN + 2 * t + e;
                    if (col < kGemmN) dst[(long long)col * kPixels] = epilogue(acc[i][j][2 * h + e], row, col);
                }
        }
}
