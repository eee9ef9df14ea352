    // The end of both mma.sync GEMM kernels (mma_gemm_kernel, gemm_mma_fp16): acc into C.
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
