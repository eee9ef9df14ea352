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
constexpr long long kHeldGroups = kChunk / 4;  // float4s per block
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

{{>norm_row_registers}}

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

    float4 d[kGroups]; // x - shift
    load_held(in, base, shift, d);
    const float mean = kCentre ? cluster_sum(cluster, &published[0], block_sum(held_sum(d))) / kLen : 0.0f;
    const float rstd =
        1.0f / sqrtf(cluster_sum(cluster, &published[1], block_sum(held_squares(d, mean))) / kLen + kEps);
    // Done with the peers' shared memory: say so, and wait for them only before exiting.
    asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
    store_held(output, out, base, d, mean, rstd);
    asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory"); // the peers have read `published`
}
