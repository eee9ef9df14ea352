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

__device__ __forceinline__ void load_tile(TileRegs &r, const float *A, const float *B, int m0, int n0, int k0)
{
#pragma unroll
    for (int i = 0; i < kLoadsA; ++i) {
        const int c = threadIdx.x + i * kThreads;
        if constexpr (kTransA) {
            constexpr int kPerRow = kBM / kVecA;
            const int gk = k0 + c / kPerRow, gm = m0 + (c % kPerRow) * kVecA;
            const bool inside = gk < kK && gm < kM;
            load_vec<kVecA>(r.a[i], A + (inside ? (long long)gk * kM + gm : 0), inside);
        } else {
            constexpr int kPerRow = kBK / kVecA;
            const int gm = m0 + c / kPerRow, gk = k0 + (c % kPerRow) * kVecA;
            const bool inside = gm < kM && gk < kK;
            load_vec<kVecA>(r.a[i], A + (inside ? (long long)gm * kK + gk : 0), inside);
        }
    }
#pragma unroll
    for (int i = 0; i < kLoadsB; ++i) {
        const int c = threadIdx.x + i * kThreads;
        if constexpr (kTransB) {
            constexpr int kPerRow = kBK / kVecB;
            const int gn = n0 + c / kPerRow, gk = k0 + (c % kPerRow) * kVecB;
            const bool inside = gn < kN && gk < kK;
            load_vec<kVecB>(r.b[i], B + (inside ? (long long)gn * kK + gk : 0), inside);
        } else {
            constexpr int kPerRow = kBN / kVecB;
            const int gk = k0 + c / kPerRow, gn = n0 + (c % kPerRow) * kVecB;
            const bool inside = gk < kK && gn < kN;
            load_vec<kVecB>(r.b[i], B + (inside ? (long long)gk * kN + gn : 0), inside);
        }
    }
}
