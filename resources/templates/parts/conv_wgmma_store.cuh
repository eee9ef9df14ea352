    // The epilogue and the store, from `sum` of consumer warpgroup c (a scope of its own: it
    // names its lanes and warps afresh).
    {
        // Epilogue: a function of acc, row (the output pixel) and col (the output channel). Register
        // 4j + r of a thread sits at pixel 16 * warp + lane / 4 (+8 for r >= 2) of its warpgroup and
        // channel 8j + 2 * (lane % 4) (+1 for odd r).
        const auto epilogue = [&](float acc, int row, int col) -> float { return {{EPILOGUE}}; };
        const int lane = threadIdx.x % 32, warp = (threadIdx.x % 128) / 32;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            // GEMM row m is output pixel m, or transposed, the pixel of the phase f it stands for.
            const int m = m0 + c * 64 + warp * 16 + lane / 4 + 8 * h;
            if (m >= kRowsM) continue;
            const int px = kTransposed ? phase_out_pixel(m, f) : m;
            if (px < 0) continue;
            float *dst = out + (long long)(px / kPixels) * kGemmN * kPixels + px % kPixels;
#pragma unroll
            for (int j = 0; j < kBN / 8; ++j)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const int ch = n0 + 8 * j + 2 * (lane % 4) + e;
                    if (ch < kGemmN) dst[(long long)ch * kPixels] = epilogue(total[4 * j + 2 * h + e], px, ch);
                }
        }
    }
