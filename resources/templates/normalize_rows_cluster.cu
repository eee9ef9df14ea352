// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// Elementwise ops around a reduction of each row (x / sum(|x|), x / ||x||), the row too long for a
// block to hold and too many rows in flight for L2 to serve a second read: each row belongs to a
// thread-block cluster of kCluster blocks (Hopper), and block r of the cluster holds chunk r of the
// row in registers, kElems values per thread, kBlock apart so a warp's loads are contiguous. Each
// block reduces its chunk (double for sums) as it loads it, publishes the result in shared memory,
// and after cluster.sync() combines all its peers' results through distributed shared memory in
// rank order, so every block gets the same row value. The outputs are computed from the registers:
// one read and one write of the row. A split cluster barrier (arrive after reading the peers,
// wait before exiting) keeps each block's shared memory alive until its peers have read it.
//
// @problem {{PROBLEM}}
// @precision fp32
// @launch normalize_rows_cluster grid({{GRID}}) block({{BLOCK}}) cluster({{CLUSTER}}, 1, 1) args({{IN_LAUNCH}}{{OUT_LAUNCH}}, {{OUT}})

#include <cooperative_groups.h>
namespace cg = cooperative_groups;

constexpr long long kRows = {{ROWS}};          // rows
constexpr long long kLen = {{LEN}};            // elements per row
constexpr int kCluster = {{CLUSTER}};          // blocks per row
constexpr long long kChunk = kLen / kCluster;  // elements per block
constexpr int kBlock = {{BLOCK}};              // threads per block
constexpr int kElems = {{ELEMS}};              // row values per thread
constexpr int kVec = 1;                        // reduction_tree's loads: one float
static_assert(kChunk * kCluster == kLen && kChunk <= (long long)kBlock * kElems, "a row's chunks fill the cluster");

{{INPUT}}
{{REDUCTION}}
{{OUTPUT}}
{{>reduction_tree}}

extern "C" __global__ void __launch_bounds__(kBlock)
normalize_rows_cluster({{IN_PARAMS}}{{OUT_PARAMS}}, float* __restrict__ out)
{
    cg::cluster_group cluster = cg::this_cluster();
    const unsigned rank = cluster.block_rank(); // which chunk of the row this block holds
    const Input in{ {{IN_ARGS}} };
    const Output output{ {{OUT_ARGS}} };
    const long long base = (long long)(blockIdx.x / kCluster) * kLen; // the row's first element
    const long long first = rank * kChunk;                             // the chunk's first position
    __shared__ Reduction::Acc published;

    // The chunk in registers: raw values of the held tensor, folded as Input makes them.
    float held[kElems];
    Reduction::Acc acc = Reduction::identity();
#pragma unroll
    for (int e = 0; e < kElems; ++e) {
        const long long j = (long long)e * kBlock + threadIdx.x; // within the chunk
        if (j < kChunk) {
            held[e] = in.raw(base + first + j);
            acc = Reduction::combine(acc, Reduction::lift(in.at_held(base + first + j, held[e]), first + j));
        }
    }
    acc = block_reduce<kBlock>(acc);
    if (threadIdx.x == 0)
        published = acc;
    cluster.sync();
    Reduction::Acc total = Reduction::identity();
#pragma unroll
    for (int r = 0; r < kCluster; ++r)
        total = Reduction::combine(total, *cluster.map_shared_rank(&published, r));
    const float value = Reduction::finish(total);
    // Done with the peers' shared memory: say so, and wait for them only before exiting.
    asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
#pragma unroll
    for (int e = 0; e < kElems; ++e) {
        const long long j = (long long)e * kBlock + threadIdx.x;
        if (j < kChunk)
            out[base + first + j] = output.at_held(base + first + j, held[e], value);
    }
    asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory"); // the peers have read `published`
}
