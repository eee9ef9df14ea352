// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// A cumulative sum (or product) along each row, one block per row, in tiles of kBlock x kItems
// elements: each thread scans its kItems consecutive elements in registers, the threads' totals
// are scanned across the block (warp shuffles, then the warps' totals through shared memory), and
// a carry holds the running value of the tiles before. Everything runs in double, so a float
// rounding error does not build up along the row; the output is rounded once. With kReverse the
// row is walked from its end (a flip on both sides of the scan). Input reads what the scan runs
// over, Output makes each output element from the running value.
//
// @problem {{PROBLEM}}
// @precision fp32
// @launch scan_rows grid({{ROWS}}) block({{BLOCK}}) args({{IN_LAUNCH}}{{OUT_LAUNCH}}, {{OUT}})

constexpr long long kRows = {{ROWS}};                // rows
constexpr long long kLen = {{LEN}};                  // elements per row
constexpr int kBlock = {{BLOCK}};                    // threads per block
constexpr int kItems = {{ITEMS}};                    // consecutive elements per thread per tile
constexpr bool kReverse = {{REVERSE}};               // from the end of the row
constexpr bool kProduct = {{PRODUCT}};               // cumprod; else cumsum
constexpr int kWarps = kBlock / 32;
constexpr long long kTile = (long long)kBlock * kItems;
constexpr bool kVec4 = kLen % 4 == 0 && kItems % 4 == 0; // whole float4 groups, 16-byte aligned
constexpr unsigned kFullMask = 0xffffffffu;
constexpr double kIdentity = kProduct ? 1.0 : 0.0;

{{INPUT}}
{{OUTPUT}}
__device__ __forceinline__ double combine(double a, double b) { return kProduct ? a * b : a + b; }

// The row's element at position p in scan order.
__device__ __forceinline__ long long physical(long long p) { return kReverse ? kLen - 1 - p : p; }

// Inclusive scan across the warp, in lane order.
__device__ __forceinline__ double warp_scan(double v)
{
    const int lane = threadIdx.x % 32;
    for (int d = 1; d < 32; d <<= 1) {
        const double u = __shfl_up_sync(kFullMask, v, d);
        if (lane >= d)
            v = combine(u, v);
    }
    return v;
}

// The combination of the totals of the threads before this one, and of the whole block.
__device__ double block_exclusive(double total, double &blockTotal)
{
    __shared__ double warpTotal[kWarps];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const double inclusive = warp_scan(total);
    const double before = __shfl_up_sync(kFullMask, inclusive, 1);
    if (lane == 31)
        warpTotal[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        const double w = warp_scan(lane < kWarps ? warpTotal[lane] : kIdentity);
        if (lane < kWarps)
            warpTotal[lane] = w;
    }
    __syncthreads();
    const double warpsBefore = warp > 0 ? warpTotal[warp - 1] : kIdentity;
    blockTotal = warpTotal[kWarps - 1];
    __syncthreads(); // warpTotal[] is free for the next tile
    return combine(warpsBefore, lane > 0 ? before : kIdentity);
}

extern "C" __global__ void __launch_bounds__(kBlock)
scan_rows({{IN_PARAMS}}{{OUT_PARAMS}}, float* __restrict__ out)
{
    const Input in{ {{IN_ARGS}} };
    const Output output{ {{OUT_ARGS}} };
    const long long base = (long long)blockIdx.x * kLen;
    double carry = kIdentity;
    for (long long tile = 0; tile < kLen; tile += kTile) {
        const long long first = tile + (long long)threadIdx.x * kItems; // scan-order position of item 0
        double v[kItems];
        if constexpr (kVec4) {
#pragma unroll
            for (int q = 0; q < kItems / 4; ++q) {
                const long long p = first + 4 * q;
                float4 x = make_float4(kIdentity, kIdentity, kIdentity, kIdentity);
                if (p < kLen)
                    x = in.at4(base + (kReverse ? kLen - 4 - p : p));
                if constexpr (kReverse)
                    x = make_float4(x.w, x.z, x.y, x.x);
                v[4 * q] = x.x, v[4 * q + 1] = x.y, v[4 * q + 2] = x.z, v[4 * q + 3] = x.w;
            }
        } else {
#pragma unroll
            for (int k = 0; k < kItems; ++k)
                v[k] = first + k < kLen ? double(in.at(base + physical(first + k))) : kIdentity;
        }
#pragma unroll
        for (int k = 1; k < kItems; ++k)
            v[k] = combine(v[k - 1], v[k]);
        double blockTotal;
        const double before = combine(carry, block_exclusive(v[kItems - 1], blockTotal));
        if constexpr (kVec4) {
#pragma unroll
            for (int q = 0; q < kItems / 4; ++q) {
                const long long p = first + 4 * q;
                if (p >= kLen)
                    break;
                float4 y = make_float4(float(combine(before, v[4 * q])), float(combine(before, v[4 * q + 1])),
                                       float(combine(before, v[4 * q + 2])), float(combine(before, v[4 * q + 3])));
                if constexpr (kReverse)
                    y = make_float4(y.w, y.z, y.y, y.x);
                const long long i = base + (kReverse ? kLen - 4 - p : p);
                *reinterpret_cast<float4*>(out + i) = output.at4(i, y);
            }
        } else {
#pragma unroll
            for (int k = 0; k < kItems; ++k)
                if (first + k < kLen) {
                    const long long i = base + physical(first + k);
                    out[i] = output.at(i, float(combine(before, v[k])));
                }
        }
        carry = combine(carry, blockTotal);
    }
}
