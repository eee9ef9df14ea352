    // The start of the mma.sync convolution kernels (conv_mma_kernel, conv_implicit_gemm_pool): the
    // gather tables, then the cp.async pipeline through every K tile; acc holds the block's tile.
    extern __shared__ __align__(128) float smem[];
    int2 *taps = reinterpret_cast<int2 *>(smem + kStages * kStageFloats);
    int4 *rows = reinterpret_cast<int4 *>(taps + kKPadded);
    int *wtaps = reinterpret_cast<int *>(rows + kBM); // transposed only: each tap's weight offset

    // A transposed convolution's phases of one tile of pixels are neighbouring blocks: they read the
    // same input, and their stores fill the same output sectors while those are in L2.
    const int m0 = blockIdx.x / kPhases * kBM, n0 = blockIdx.y * kBN;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int warpRow = (warp % kWarpsM) * kWM, warpCol = (warp / kWarpsM) * kWN;

    const Phase phase = phase_of(blockIdx.x % kPhases);
    if constexpr (kTransposed) {
        for (int k = threadIdx.x; k < kKPadded; k += kThreads) taps[k] = phase_tap_entry(k, phase, wtaps[k]);
    } else {
        for (int k = threadIdx.x; k < kKPadded; k += kThreads) taps[k] = tap_entry(k);
    }
    for (int r = threadIdx.x; r < kBM; r += kThreads) rows[r] = row_entry(m0 + r, phase);
    __syncthreads();

    float acc[kFragsM][kFragsN][4] = {};

    // Pipeline: kStages-1 tiles in flight while one is multiplied.
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
        if (s < kTilesK) {
            load_tile_a(smem + s * kStageFloats, x, taps, rows, s * kBK);
            load_tile_b(smem + s * kStageFloats + kStageA, w, wtaps, n0, s * kBK);
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
            load_tile_b(stage + kStageA, w, wtaps, n0, next * kBK);
        }
        cp_async_commit();
        const float *stage = smem + (kt % kStages) * kStageFloats;
        mma_stage(acc, stage, stage + kStageA, warpRow, warpCol, lane);
    }
    cp_async_wait<0>();
