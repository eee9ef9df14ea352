// The weight as the tensor cores read it: per phase (one, or a transposed convolution's, see
// conv_phases), [part][tileN][tileK][BN][32] of B(n, k), hi then lo. Plain, B(n, k) is the weight's
// row n; transposed, w[wofs(k) + n * taps] with the phase's tap offsets.
constexpr long long kPhaseB = kParts * kPartB;

extern "C" __global__ void __launch_bounds__(256)
conv_prepare(const float *__restrict__ w, float *__restrict__ wtiles)
{
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    // One thread per 8 consecutive taps of one weight row: chunks 2c and 2c+1 share an aligned
    // 32-byte pair of slots under the swizzle.
    if (idx >= (long long)kPhases * kTilesN * kBN * kTilesK * 4) return;
    const int pair = idx % 4, tk = (idx / 4) % kTilesK, n = (idx / (4 * kTilesK)) % (kTilesN * kBN);
    const int z = idx / (4LL * kTilesK * kTilesN * kBN);
    const Phase f = phase_of(z);
    const int k0 = tk * kBK + pair * 8;
    float hi[8], lo[8];
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        float v = 0.0f;
        if constexpr (kTransposed) {
            int wofs = -1;
            phase_tap_entry(k0 + i, f, wofs);
            if (n < kGemmN && wofs >= 0) v = __ldg(w + wofs + (long long)n * kKernelTaps);
        } else if (n < kGemmN && k0 + i < kGemmK) {
            v = __ldg(w + (long long)n * kGemmK + k0 + i);
        }
        hi[i] = to_tf32(v);
        lo[i] = to_tf32(v - hi[i]);
    }
    const int row = n % kBN;
    const int first = (2 * pair) ^ (row & 7), second = first ^ 1;
    float *dst = wtiles + z * kPhaseB + ((long long)(n / kBN) * kTilesK + tk) * kTileB + (long long)row * kBK;
    reinterpret_cast<float4 *>(dst)[first] = make_float4(hi[0], hi[1], hi[2], hi[3]);
    reinterpret_cast<float4 *>(dst)[second] = make_float4(hi[4], hi[5], hi[6], hi[7]);
    if constexpr (kParts == 2) {
        dst += kPartB;
        reinterpret_cast<float4 *>(dst)[first] = make_float4(lo[0], lo[1], lo[2], lo[3]);
        reinterpret_cast<float4 *>(dst)[second] = make_float4(lo[4], lo[5], lo[6], lo[7]);
    }
}
