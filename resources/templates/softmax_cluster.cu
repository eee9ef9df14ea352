// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// Each row belongs to a thread-block cluster of kCluster blocks (Hopper). Block r of the cluster
// holds chunk r of the row in registers (kElems values per thread) and reduces its own maximum
// and sum of exp(x - max), which it publishes in shared memory. After cluster.sync() every block
// reads all its peers' pairs through distributed shared memory (map_shared_rank), merges them in
// rank order into the row's statistics, and writes its chunk from registers. One read and one
// write of the row; a split cluster barrier (arrive after reading the peers, wait before exiting)
// keeps each block's shared memory alive until its peers have read it without delaying the stores.
//
// @problem {{PROBLEM}}
// @precision fp32
// @launch softmax_cluster grid({{GRID}}) block({{BLOCK}}) cluster({{CLUSTER}}, 1, 1) args({{IN_LAUNCH}}{{OUT_LAUNCH}}, {{OUT}})

#include <cooperative_groups.h>
namespace cg = cooperative_groups;

constexpr long long kRows = {{ROWS}};          // rows
constexpr long long kLen = {{LEN}};            // elements per row
constexpr int kCluster = {{CLUSTER}};          // blocks per row
constexpr long long kChunk = kLen / kCluster;  // elements per block
constexpr long long kChunkGroups = kChunk / 4; // float4s per block
constexpr int kBlock = {{BLOCK}};              // threads per block
constexpr int kElems = {{ELEMS}};              // row values per thread
constexpr int kGroups = kElems / 4;            // float4s per thread

{{INPUT}}
{{OUTPUT}}
{{^LOG}}
// softmax keeps exp(x - block max) in registers; the output rescales it to the row's maximum
// and divides by the row's sum.
__device__ __forceinline__ float exp_sum(float4& v, float m)
{
    v = make_float4(expf(v.x - m), expf(v.y - m), expf(v.z - m), expf(v.w - m));
    return (v.x + v.y) + (v.z + v.w);
}
__device__ __forceinline__ float4 finish4(float4 v, float block_max, float row_max, float row_sum)
{
    const float scale = expf(block_max - row_max) / row_sum;
    return make_float4(v.x * scale, v.y * scale, v.z * scale, v.w * scale);
}
{{/LOG}}
{{#LOG}}
// log_softmax keeps x in registers; the output is x - row max - log(row sum).
__device__ __forceinline__ float exp_sum(float4& v, float m)
{
    return (expf(v.x - m) + expf(v.y - m)) + (expf(v.z - m) + expf(v.w - m));
}
__device__ __forceinline__ float4 finish4(float4 v, float, float row_max, float row_sum)
{
    const float shift = row_max + logf(row_sum);
    return make_float4(v.x - shift, v.y - shift, v.z - shift, v.w - shift);
}
{{/LOG}}

{{>block_max_sum}}

__device__ __forceinline__ void store4(float* p, long long i, float4 v)
{
    *reinterpret_cast<float4*>(p + i) = v;
}

extern "C" __global__ void __launch_bounds__(kBlock)
softmax_cluster({{IN_PARAMS}}{{OUT_PARAMS}}, float* __restrict__ out)
{
    cg::cluster_group cluster = cg::this_cluster();
    const unsigned rank = cluster.block_rank(); // which chunk of the row this block holds
    const Input in{ {{IN_ARGS}} };
    const Output output{ {{OUT_ARGS}} };
    const long long base = (long long)(blockIdx.x / kCluster) * kLen + rank * kChunk;
    __shared__ float2 published; // this block's (max, sum), read by the whole cluster

    float4 v[kGroups];
#pragma unroll
    for (int g = 0; g < kGroups; ++g) {
        const long long k = (long long)g * kBlock + threadIdx.x; // float4 index within the chunk
        v[g] = k < kChunkGroups ? in.at4(base + 4 * k) : make_float4(kLowest, kLowest, kLowest, kLowest);
    }

    float m = kLowest;
#pragma unroll
    for (int g = 0; g < kGroups; ++g)
        m = fmaxf(m, fmaxf(fmaxf(v[g].x, v[g].y), fmaxf(v[g].z, v[g].w)));
    m = block_max(m);

    float s = 0.0f;
#pragma unroll
    for (int g = 0; g < kGroups; ++g)
        s += exp_sum(v[g], m);
    s = block_sum(s);

    if (threadIdx.x == 0)
        published = make_float2(m, s);
    cluster.sync();
    float row_max = kLowest, row_sum = 0.0f;
#pragma unroll
    for (int r = 0; r < kCluster; ++r) {
        const float2 peer = *cluster.map_shared_rank(&published, r);
        const float merged = fmaxf(row_max, peer.x);
        row_sum = row_sum * expf(row_max - merged) + peer.y * expf(peer.x - merged);
        row_max = merged;
    }
    // Done with the peers' shared memory: say so, and wait for them only before exiting, so that
    // the stores start at once (a full cluster.sync() here cost 8 % on the seed softmax).
    asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");

#pragma unroll
    for (int g = 0; g < kGroups; ++g) {
        const long long k = (long long)g * kBlock + threadIdx.x;
        if (k < kChunkGroups)
            store4(out, base + 4 * k, output.at4(base + 4 * k, finish4(v[g], m, row_max, row_sum)));
    }
    asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory"); // the peers have read `published`
}
