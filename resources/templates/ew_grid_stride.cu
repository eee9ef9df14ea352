// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// One thread per element in a grid-stride loop. Each element's operands are read once and the
// whole chain runs in registers, so no intermediate result goes through memory. Plain 4-byte
// loads through the read-only cache: the baseline the other elementwise ideas improve on.
//
// @problem {{PROBLEM}}
// @precision fp32
// @launch elementwise_grid_stride grid({{GRID}}) block({{BLOCK}}) args({{OPERANDS}}, {{OUT}})

constexpr long long kNumel = {{NUMEL}}; // elements of {{OUT}}
constexpr int kBlock = {{BLOCK}};       // threads per block

{{CHAIN}}
extern "C" __global__ void __launch_bounds__(kBlock)
elementwise_grid_stride({{OPERAND_PARAMS}}, float* __restrict__ out)
{
    const Chain chain{ {{OPERAND_ARGS}} };
    const long long stride = (long long)gridDim.x * kBlock;
    for (long long i = (long long)blockIdx.x * kBlock + threadIdx.x; i < kNumel; i += stride)
        out[i] = chain.at(i);
}
