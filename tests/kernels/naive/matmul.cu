// @expect correct
// @problem matmul
// Plain fp32 matmul out = A @ B with 16x16 shared-memory tiles, one thread per output
// element. Every element is a single fp32 dot product of length N with FMA accumulation,
// which stays well inside the strict (1e-4, scale-aware) tolerance. Loads past the edge
// are zero-filled and stores are guarded, so any N works (the small variant too).
// @precision fp32
// @launch matmul_tiled grid(cdiv(out.shape[1], 16), cdiv(out.shape[0], 16)) block(16, 16) args(A, B, out, i32(A.shape[0]))

constexpr int kTile = 16;  // must match block(16, 16) and the cdiv(..., 16) in the grid above

extern "C" __global__ void matmul_tiled(const float* __restrict__ A, const float* __restrict__ B,
                                        float* __restrict__ C, int n)
{
    __shared__ float a_tile[kTile][kTile];
    __shared__ float b_tile[kTile][kTile];

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * kTile + ty;
    const int col = blockIdx.x * kTile + tx;

    float acc = 0.0f;
    for (int k0 = 0; k0 < n; k0 += kTile) {
        const int a_col = k0 + tx;
        const int b_row = k0 + ty;
        a_tile[ty][tx] = (row < n && a_col < n) ? A[(size_t)row * n + a_col] : 0.0f;
        b_tile[ty][tx] = (b_row < n && col < n) ? B[(size_t)b_row * n + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < kTile; ++k)
            acc = fmaf(a_tile[ty][k], b_tile[k][tx], acc);
        __syncthreads();
    }
    if (row < n && col < n)
        C[(size_t)row * n + col] = acc;
}
