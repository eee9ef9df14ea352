// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// Each row belongs to a thread-block cluster of kCluster blocks (Hopper), and lives in their
// registers: block r of the cluster holds chunk r of the row, kElems values per thread (kGroups
// float4s, kBlock float4s apart so loads coalesce). The statistics are the exact two passes of a
// row held in one block's registers, each pass a cluster-wide sum: every block sums its chunk,
// publishes the sum in shared memory, and after cluster.sync() reads all its peers' sums through
// distributed shared memory (map_shared_rank), adding them in rank order, so every block gets the
// same total. First the mean of d = x - shift (shift: the row's first element), then the mean of
// (d - mean)^2; the normalized chunk is written from registers. One read and one write of a row
// too long for one block. A split cluster barrier (arrive after reading the peers' second sums,
// wait before exiting) keeps each block's shared memory alive until its peers have read it without
// delaying the stores. RMSNorm (kCentre false) takes the mean square of x instead.
//
// @problem {{PROBLEM}}
// @precision fp32
// @launch norm_cluster grid({{GRID}}) block({{BLOCK}}) cluster({{CLUSTER}}, 1, 1) args({{IN_LAUNCH}}{{OUT_LAUNCH}}, {{OUT}})

#include <cooperative_groups.h>
namespace cg = cooperative_groups;

constexpr long long kRows = {{ROWS}};          // rows
constexpr long long kLen = {{LEN}};            // elements per row (the normalized dims)
constexpr int kCluster = {{CLUSTER}};          // blocks per row
constexpr long long kChunk = kLen / kCluster;  // elements per block
constexpr long long kChunkGroups = kChunk / 4; // float4s per block
constexpr int kBlock = {{BLOCK}};              // threads per block
constexpr int kElems = {{ELEMS}};              // row values per thread
constexpr int kGroups = kElems / 4;            // float4s per thread
constexpr int kWarps = kBlock / 32;
constexpr float kEps = {{EPS}};
constexpr bool kCentre = {{CENTRE}};           // LayerNorm subtracts the mean; RMSNorm does not
constexpr unsigned kFullMask = 0xffffffffu;
static_assert(kChunk % 4 == 0 && kChunk * kCluster == kLen, "whole float4s in every chunk");

{{INPUT}}
{{OUTPUT}}
{{>block_sum}}

__device__ __forceinline__ float4 minus(float4 v, float s) { return make_float4(v.x - s, v.y - s, v.z - s, v.w - s); }
__device__ __forceinline__ float sum4(float4 v) { return (v.x + v.y) + (v.z + v.w); }
__device__ __forceinline__ float squares4(float4 v) { return (v.x * v.x + v.y * v.y) + (v.z * v.z + v.w * v.w); }

__device__ __forceinline__ void store4(float* p, long long i, float4 v)
{
    *reinterpret_cast<float4*>(p + i) = v;
}

// The row's total of `mine` (this block's sum): published in `slot`, the cluster meets, and every
// block adds the peers' sums in rank order.
__device__ __forceinline__ float cluster_sum(cg::cluster_group& cluster, float* slot, float mine)
{
    if (threadIdx.x == 0)
        *slot = mine;
    cluster.sync();
    float total = 0.0f;
#pragma unroll
    for (int r = 0; r < kCluster; ++r)
        total += *cluster.map_shared_rank(slot, r);
    return total;
}

extern "C" __global__ void __launch_bounds__(kBlock)
norm_cluster({{IN_PARAMS}}{{OUT_PARAMS}}, float* __restrict__ out)
{
    cg::cluster_group cluster = cg::this_cluster();
    const unsigned rank = cluster.block_rank(); // which chunk of the row this block holds
    const Input in{ {{IN_ARGS}} };
    const Output output{ {{OUT_ARGS}} };
    const long long row = (long long)(blockIdx.x / kCluster) * kLen;
    const long long base = row + rank * kChunk;
    const float shift = kCentre ? in.at(row) : 0.0f;
    // One slot per pass: a peer may still read the first while this block publishes the second.
    __shared__ float published[2];

    float4 d[kGroups]; // x - shift; slots past the end of the chunk are never used
#pragma unroll
    for (int g = 0; g < kGroups; ++g) {
        const long long k = (long long)g * kBlock + threadIdx.x; // float4 index within the chunk
        d[g] = k < kChunkGroups ? minus(in.at4(base + 4 * k), shift) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }

    float mean = 0.0f; // of x - shift
    if constexpr (kCentre) {
        float s = 0.0f;
#pragma unroll
        for (int g = 0; g < kGroups; ++g)
            if ((long long)g * kBlock + threadIdx.x < kChunkGroups)
                s += sum4(d[g]);
        mean = cluster_sum(cluster, &published[0], block_sum(s)) / kLen;
    }
    float squares = 0.0f;
#pragma unroll
    for (int g = 0; g < kGroups; ++g)
        if ((long long)g * kBlock + threadIdx.x < kChunkGroups)
            squares += squares4(minus(d[g], mean));
    const float rstd = 1.0f / sqrtf(cluster_sum(cluster, &published[1], block_sum(squares)) / kLen + kEps);
    // Done with the peers' shared memory: say so, and wait for them only before exiting.
    asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");

#pragma unroll
    for (int g = 0; g < kGroups; ++g) {
        const long long k = (long long)g * kBlock + threadIdx.x;
        if (k < kChunkGroups) {
            const float4 c = minus(d[g], mean);
            store4(out, base + 4 * k, output.at4(base + 4 * k, make_float4(c.x * rstd, c.y * rstd, c.z * rstd, c.w * rstd)));
        }
    }
    asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory"); // the peers have read `published`
}
