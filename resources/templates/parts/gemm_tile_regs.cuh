// Global -> registers, one tile ahead of the product (gemm_tiled_fp32, gemm_mma_fp16): thread t
// holds the chunks t, t + kThreads, ... of the A tile (rows of BK/kVecA chunks of kVecA floats, or
// for an A stored [K, M] BK rows of BM/kVecA chunks) and of the B tile, zero outside the matrices;
// each template's store_tile puts them into shared memory in its own layout.
constexpr int kLoadsA = kBM * kBK / kVecA / kThreads;     // per thread and tile
constexpr int kLoadsB = kBN * kBK / kVecB / kThreads;
static_assert(kLoadsA * kVecA * kThreads == kBM * kBK, "A tile loads must spread evenly over the threads");
static_assert(kLoadsB * kVecB * kThreads == kBN * kBK, "B tile loads must spread evenly over the threads");

struct TileRegs {
    float a[kLoadsA][kVecA];
    float b[kLoadsB][kVecB];
};

template <int kVec>
__device__ __forceinline__ void load_vec(float (&v)[kVec], const float *src, bool inside)
{
    if constexpr (kVec == 4) {
        const float4 x = inside ? __ldg(reinterpret_cast<const float4 *>(src)) : make_float4(0.f, 0.f, 0.f, 0.f);
        v[0] = x.x; v[1] = x.y; v[2] = x.z; v[3] = x.w;
    } else {
        v[0] = inside ? __ldg(src) : 0.f;
    }
}

// Chunk c (kVec floats) of a tile kCols wide whose corner is (r0, c0) in a row-major rows x cols
// matrix, zero outside the matrix.
template <int kVec, int kCols>
__device__ __forceinline__ void load_chunk(float (&v)[kVec], const float *m, int rows, int cols, int r0, int c0, int c)
{
    constexpr int kPerRow = kCols / kVec;
    const int gr = r0 + c / kPerRow, gc = c0 + (c % kPerRow) * kVec;
    const bool inside = gr < rows && gc < cols;
    load_vec<kVec>(v, m + (inside ? (long long)gr * cols + gc : 0), inside);
}

// A is [M, K] or, transposed, stored [K, M]; B is [K, N] or, transposed, stored [N, K].
__device__ __forceinline__ void load_tile(TileRegs &r, const float *A, const float *B, int m0, int n0, int k0)
{
#pragma unroll
    for (int i = 0; i < kLoadsA; ++i) {
        const int c = threadIdx.x + i * kThreads;
        if constexpr (kTransA)
            load_chunk<kVecA, kBM>(r.a[i], A, kK, kM, k0, m0, c);
        else
            load_chunk<kVecA, kBK>(r.a[i], A, kM, kK, m0, k0, c);
    }
#pragma unroll
    for (int i = 0; i < kLoadsB; ++i) {
        const int c = threadIdx.x + i * kThreads;
        if constexpr (kTransB)
            load_chunk<kVecB, kBK>(r.b[i], B, kN, kK, n0, k0, c);
        else
            load_chunk<kVecB, kBN>(r.b[i], B, kK, kN, k0, n0, c);
    }
}
