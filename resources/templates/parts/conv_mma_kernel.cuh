// The kernel of conv_implicit_gemm_tf32 and _tf32x3 (see conv_mma_tiles), named by KERNEL; each
// template defines mma_stage, the product of one BK-deep slice.
// ---- the kernel ----
extern "C" __global__ void __launch_bounds__(kThreads, kMinBlocks)
{{KERNEL}}(const float *__restrict__ x, const float *__restrict__ w, float *__restrict__ out{{EPILOGUE_PARAMS}})
{
{{>conv_mma_mainloop}}

    // Epilogue: a function of acc, row (the output pixel m) and col (the output channel), stored
    // into NCHW: out[b][col][p] with m = b*OH*OW + p. Eight consecutive pixels per 32-byte segment
    // (transposed, a phase's pixels are `stride` apart).
    const auto epilogue = [&](float acc, int row, int col) -> float { return {{EPILOGUE}}; };
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < kFragsM; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int m = m0 + warpRow + i * kMmaM + g + 8 * h;
            if (m >= kRowsM) continue;
            const int row = kTransposed ? phase_out_pixel(m, phase) : m;
            if (kTransposed && row < 0) continue;
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
