// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// Four consecutive elements per access: operands that have the output's shape are read with one
// 16-byte float4 load, results are written with one 16-byte store. Each thread takes UNROLL such
// groups per trip, all loads first, so a warp has several 512-byte requests in flight before it
// needs the first. The last numel % 4 elements, if any, are done one at a time.
//
// @problem {{PROBLEM}}
// @precision fp32
// @launch elementwise_vec4 grid({{GRID}}) block({{BLOCK}}) args({{OPERANDS}}, {{OUT}})

constexpr long long kNumel = {{NUMEL}};             // elements of {{OUT}}
constexpr long long kGroups = kNumel / 4;           // whole float4 groups
constexpr int kBlock = {{BLOCK}};                   // threads per block
constexpr int kUnroll = {{UNROLL}};                 // float4 groups per thread per trip
constexpr long long kTile = (long long)kBlock * kUnroll; // float4 groups per block per trip

{{CHAIN}}
__device__ __forceinline__ void store4(float* p, long long i, float4 v)
{
    *reinterpret_cast<float4*>(p + i) = v;
}

extern "C" __global__ void __launch_bounds__(kBlock)
elementwise_vec4({{OPERAND_PARAMS}}, float* __restrict__ out)
{
    const Chain chain{ {{OPERAND_ARGS}} };
    for (long long tile = (long long)blockIdx.x * kTile; tile < kGroups; tile += (long long)gridDim.x * kTile) {
        float4 r[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const long long g = tile + u * kBlock + threadIdx.x;
            if (g < kGroups)
                r[u] = chain.at4(4 * g);
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const long long g = tile + u * kBlock + threadIdx.x;
            if (g < kGroups)
                store4(out, 4 * g, r[u]);
        }
    }
    if constexpr (kNumel % 4 != 0) {
        if (blockIdx.x == 0 && threadIdx.x < kNumel % 4) {
            const long long i = kGroups * 4 + threadIdx.x;
            out[i] = chain.at(i);
        }
    }
}
