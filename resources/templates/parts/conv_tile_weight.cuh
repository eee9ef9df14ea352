// B(n, k) of the implicit GEMM that gathers x tap by tap: plain, the weight's row n ([N][K]);
// transposed, w[wofs(k) + n * taps] with phase f's tap offsets (parts/conv_phases.cuh). 0 past
// the GEMM, so padded tiles multiply by zero.
__device__ __forceinline__ float tile_weight(const float *__restrict__ w, int n, int k, const Phase &f)
{
    if (n >= kGemmN) return 0.0f;
    if constexpr (kTransposed) {
        int wofs = -1;
        phase_tap_entry(k, f, wofs);
        return wofs >= 0 ? __ldg(w + wofs + (long long)n * kKernelTaps) : 0.0f;
    } else {
        return k < kGemmK ? __ldg(w + (long long)n * kGemmK + k) : 0.0f;
    }
}
