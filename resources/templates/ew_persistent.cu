// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// A persistent grid: BLOCKS_PER_SM blocks per SM, all resident at once, each walking the tensor
// in strides of the whole grid, so there is no tail wave and no block is launched twice. Every
// byte is touched once, so loads and stores carry the evict-first hint (__ldcs / __stcs) and
// leave L2 to the data still to come. Accesses are 16-byte float4s, UNROLL per thread per trip.
//
// @problem {{PROBLEM}}
// @precision fp32
// @launch elementwise_persistent grid({{GRID}}) block({{BLOCK}}) args({{OPERANDS}}, {{OUT}})

constexpr long long kNumel = {{NUMEL}};             // elements of {{OUT}}
constexpr long long kGroups = kNumel / 4;           // whole float4 groups
constexpr int kBlock = {{BLOCK}};                   // threads per block
constexpr int kUnroll = {{UNROLL}};                 // float4 groups per thread per trip
constexpr int kBlocksPerSm = {{BLOCKS_PER_SM}};     // grid = {{SMS}} SMs x kBlocksPerSm
constexpr long long kTile = (long long)kBlock * kUnroll; // float4 groups per block per trip

{{CHAIN}}
__device__ __forceinline__ void store4_streaming(float* p, long long i, float4 v)
{
    __stcs(reinterpret_cast<float4*>(p + i), v);
}

extern "C" __global__ void __launch_bounds__(kBlock, kBlocksPerSm)
elementwise_persistent({{OPERAND_PARAMS}}, float* __restrict__ out)
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
                store4_streaming(out, 4 * g, r[u]);
        }
    }
    if constexpr (kNumel % 4 != 0) {
        if (blockIdx.x == 0 && threadIdx.x < kNumel % 4) {
            const long long i = kGroups * 4 + threadIdx.x;
            out[i] = chain.at(i);
        }
    }
}
