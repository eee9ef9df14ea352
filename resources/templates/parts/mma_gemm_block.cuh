    // The start of both mma.sync GEMM kernels (mma_gemm_kernel, gemm_mma_fp16): the block's output
    // tile (m0, n0) and batch, and the warp's place in the tile (warpRow, warpCol).
{{>grouped_tile}}
    const int m0 = tileM * kBM, n0 = tileN * kBN;
    const int batch = blockIdx.z;
    A += batch * kBatchStrideA;
    B += batch * kBatchStrideB;
    C += batch * kBatchStrideC;

    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int warpRow = (warp % kWarpsM) * kWM, warpCol = (warp / kWarpsM) * kWN;
