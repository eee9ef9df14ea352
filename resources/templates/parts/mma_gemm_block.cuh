    // The start of both mma.sync GEMM kernels (mma_gemm_kernel, gemm_mma_fp16): the block's output
    // tile (m0, n0) and batch, and the warp's place in the tile (warpRow, warpCol).
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
