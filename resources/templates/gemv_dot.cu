// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// A matrix-vector product, or a product with a few columns (or rows): memory-bound, so what
// counts is streaming the long operand once at full bandwidth. Its rows ("lines": A's rows when N
// is small, else B's rows, B stored [N, K]) have K contiguous values; each warp takes one line and
// its lanes stride over K with 16-byte loads, kUnroll in flight, multiplying by the kVecs short
// vectors (read through L1, where every warp finds them). Each 4-term product is added to a
// double accumulator per vector, so long dot products lose no digits, and a warp's partial sums
// are combined by shuffles. With kSplit > 1, K is cut into kSplit slices handled by different
// blocks (enough blocks for every SM when there are few lines); their partials go to scratch and
// splitk_combine adds them in a fixed order and applies the epilogue.
//
// @problem {{PROBLEM}}
// @precision fp32
// @scratch partials float64 {{PARTIAL_WORDS}} uninitialized
// @launch gemv_dot grid({{GRID}}, {{SPLIT}}, {{BATCH}}) block({{BLOCK}}) args({{A}}, {{B}}, partials, {{OUT}}{{EPILOGUE_ARGS}})
{{#SPLITK}}
// @launch splitk_combine grid({{COMBINE_GRID}}) block(256) args(partials, {{OUT}}{{EPILOGUE_ARGS}})
{{/SPLITK}}

{{>gemv_common}}
constexpr bool kLinesOfA = {{A_LINES}};        // lines are A's rows (few columns); else B's rows
constexpr int kLines = kLinesOfA ? kM : kN;    // lines per batch
constexpr int kVecs = kLinesOfA ? kN : kM;     // short vectors
constexpr int kWarps = {{WARPS}};              // lines per block, a warp each
constexpr int kBlock = 32 * kWarps;
constexpr int kUnroll = {{UNROLL}};            // 16-byte loads in flight per lane
// The short operand: vector v's element k at v * kVecStrideV + k * kVecStrideK.
constexpr long long kVecStrideV = kLinesOfA && !kTransB ? 1 : kK;
constexpr long long kVecStrideK = kLinesOfA && !kTransB ? kN : 1;
constexpr bool kVec4 = kK % 4 == 0 && kBatchStrideA % 4 == 0 && kBatchStrideB % 4 == 0;
constexpr long long kChunkK = ((kK + kSplit - 1) / kSplit + 3) / 4 * 4; // K per slice, whole float4s
constexpr unsigned kFullMask = 0xffffffffu;
static_assert(kVecs >= 1 && kVecs <= 16, "up to 16 short vectors");

// Four values (k .. k+3) of every short vector: one 16-byte load per vector when each is
// contiguous in K, else the 4 x kVecs values at k * kN, which are contiguous (B stored [K, N]).
__device__ __forceinline__ void vectors_at(const float* __restrict__ small, long long k, float4 (&b)[kVecs])
{
    if constexpr (kVecStrideK == 1) {
#pragma unroll
        for (int v = 0; v < kVecs; ++v)
            b[v] = __ldg(reinterpret_cast<const float4*>(small + v * kVecStrideV + k));
    } else {
        float flat[4 * kVecs];
#pragma unroll
        for (int q = 0; q < kVecs; ++q) {
            const float4 f = __ldg(reinterpret_cast<const float4*>(small + k * kN) + q);
            flat[4 * q] = f.x, flat[4 * q + 1] = f.y, flat[4 * q + 2] = f.z, flat[4 * q + 3] = f.w;
        }
#pragma unroll
        for (int v = 0; v < kVecs; ++v)
            b[v] = make_float4(flat[v], flat[kN + v], flat[2 * kN + v], flat[3 * kN + v]);
    }
}

extern "C" __global__ void __launch_bounds__(kBlock)
gemv_dot(const float* __restrict__ A, const float* __restrict__ B,
         double* __restrict__ partials,
         float* __restrict__ C{{EPILOGUE_PARAMS}})
{
    const int lane = threadIdx.x % 32;
    const int line = blockIdx.x * kWarps + threadIdx.x / 32;
    const int split = blockIdx.y, batch = blockIdx.z;
    if (line >= kLines)
        return;
    const float* long_ = (kLinesOfA ? A + batch * kBatchStrideA : B + batch * kBatchStrideB) + (long long)line * kK;
    const float* small = kLinesOfA ? B + batch * kBatchStrideB : A + batch * kBatchStrideA;
    const long long k0 = split * kChunkK, k1 = k0 + kChunkK < kK ? k0 + kChunkK : kK;

    double sum[kVecs];
#pragma unroll
    for (int v = 0; v < kVecs; ++v)
        sum[v] = 0.0;
    // Whole trips first (every lane's kUnroll loads inside the slice, no bounds checks), then the
    // rest one load at a time. Products are summed four at a time in float, then in double.
    if constexpr (kVec4) {
        long long k = k0 + 4 * lane;
        for (; k + 4 * 32 * (kUnroll - 1) < k1; k += 4 * 32 * kUnroll) {
            float4 a[kUnroll];
#pragma unroll
            for (int u = 0; u < kUnroll; ++u)
                a[u] = __ldcs(reinterpret_cast<const float4*>(long_ + k + 4 * 32 * u));
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                float4 b[kVecs];
                vectors_at(small, k + 4 * 32 * u, b);
#pragma unroll
                for (int v = 0; v < kVecs; ++v)
                    sum[v] += a[u].x * b[v].x + a[u].y * b[v].y + a[u].z * b[v].z + a[u].w * b[v].w;
            }
        }
        for (; k < k1; k += 4 * 32) {
            const float4 a = __ldcs(reinterpret_cast<const float4*>(long_ + k));
            float4 b[kVecs];
            vectors_at(small, k, b);
#pragma unroll
            for (int v = 0; v < kVecs; ++v)
                sum[v] += a.x * b[v].x + a.y * b[v].y + a.z * b[v].z + a.w * b[v].w;
        }
    } else {
        long long k = k0 + lane;
        for (; k + 3 * 32 < k1; k += 4 * 32) {
            float a[4];
#pragma unroll
            for (int q = 0; q < 4; ++q)
                a[q] = __ldcs(long_ + k + 32 * q);
#pragma unroll
            for (int v = 0; v < kVecs; ++v) {
                const float* b = small + v * kVecStrideV + k * kVecStrideK;
                sum[v] += a[0] * __ldg(b) + a[1] * __ldg(b + 32 * kVecStrideK) + a[2] * __ldg(b + 64 * kVecStrideK) +
                          a[3] * __ldg(b + 96 * kVecStrideK);
            }
        }
        for (; k < k1; k += 32) {
            const float a = __ldcs(long_ + k);
#pragma unroll
            for (int v = 0; v < kVecs; ++v)
                sum[v] += a * __ldg(small + v * kVecStrideV + k * kVecStrideK);
        }
    }
#pragma unroll
    for (int v = 0; v < kVecs; ++v)
        for (int offset = 16; offset > 0; offset >>= 1)
            sum[v] += __shfl_xor_sync(kFullMask, sum[v], offset);

    const auto epilogue = [&](float acc, int row, int col) -> float { return {{EPILOGUE}}; };
#pragma unroll
    for (int v = 0; v < kVecs; ++v)
        if (lane == v % 32)
            put(sum[v], batch, split, kLinesOfA ? line : v, kLinesOfA ? v : line, partials, C, epilogue);
}
