// The weight as the tensor cores read it: per phase (one, or a transposed convolution's, see
// conv_phases), [part][tileN][tileK][BN][kBK] of B(n, k) in Elem (TF32 in floats, or bf16), hi then
// lo. B(n, k) comes from tile_weight(w, n, k, f), 0 past the GEMM (parts/conv_tile_weight.cuh for
// the gathering templates, the image template's own for its K order). Needs Elem, kBK (128 bytes
// of Elem), kParts, the tile sizes, phase_of and parts/operand_parts.cuh.
constexpr long long kPhaseB = kParts * kPartB;

extern "C" __global__ void __launch_bounds__(256)
conv_prepare(const float *__restrict__ w, float *__restrict__ wtiles)
{
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    // One thread per 32 bytes (8 TF32 or 16 bf16 taps) of one weight row: chunks 2c and 2c+1
    // share an aligned 32-byte pair of slots under the swizzle.
    constexpr int kPair = 32 / sizeof(Elem), kHalfPair = kPair / 2;
    if (idx >= (long long)kPhases * kTilesN * kBN * kTilesK * 4) return;
    const int pair = idx % 4, tk = (idx / 4) % kTilesK, n = (idx / (4 * kTilesK)) % (kTilesN * kBN);
    const int z = idx / (4LL * kTilesK * kTilesN * kBN);
    const Phase f = phase_of(z);
    const int k0 = tk * kBK + pair * kPair;
    float hi[kPair], lo[kPair];
#pragma unroll
    for (int i = 0; i < kPair; ++i) split_value<Elem>(tile_weight(w, n, k0 + i, f), hi[i], lo[i]);
    const int row = n % kBN;
    const int first = (2 * pair) ^ (row & 7), second = first ^ 1;
    Elem *dst = reinterpret_cast<Elem *>(wtiles) + z * kPhaseB + ((long long)(n / kBN) * kTilesK + tk) * kTileB +
        (long long)row * kBK;
    reinterpret_cast<float4 *>(dst)[first] = pack16<Elem>(hi);
    reinterpret_cast<float4 *>(dst)[second] = pack16<Elem>(hi + kHalfPair);
    if constexpr (kParts == 2) {
        dst += kPartB;
        reinterpret_cast<float4 *>(dst)[first] = pack16<Elem>(lo);
        reinterpret_cast<float4 *>(dst)[second] = pack16<Elem>(lo + kHalfPair);
    }
}
