// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// Elementwise ops around a reduction, for few long rows (a whole tensor divided by its norm): the
// first kernel spreads every row over kSplit blocks that write partial reductions to scratch (as
// a grid-wide reduction does); the second, over the same chunks, has each block combine its row's
// partials in a fixed order (every block of a row gets the same value) and give its chunk's
// elements to Output with that value. Both kernels read the input once each; no atomics.
//
// @problem {{PROBLEM}}
// @precision fp32
// @scratch partials int64 {{PARTIAL_WORDS}}
// @launch reduce_chunks grid({{GRID}}) block({{BLOCK}}) args({{IN_LAUNCH}}, partials)
// @launch apply_chunks grid({{GRID}}) block({{BLOCK}}) args(partials{{OUT_LAUNCH}}, {{OUT}})

constexpr long long kRows = {{ROWS}};       // rows, each reduced to one value
constexpr long long kLen = {{LEN}};         // elements per row
constexpr int kSplit = {{SPLIT}};           // blocks per row
constexpr int kBlock = {{BLOCK}};           // threads per block
constexpr int kUnroll = {{UNROLL}};         // loads in flight per thread
constexpr bool kInterleave = false;         // each block reads the chunk it later writes

{{INPUT}}
{{REDUCTION}}
{{OUTPUT}}
{{>reduce_chunks}}

extern "C" __global__ void __launch_bounds__(kBlock)
apply_chunks(const Reduction::Acc* __restrict__ partials{{OUT_PARAMS}}, float* __restrict__ out)
{
    const Output output{ {{OUT_ARGS}} };
    const long long row = blockIdx.x / kSplit;
    const float value = Reduction::finish(row_partials<kBlock>(partials, row));
    const long long begin = (blockIdx.x % kSplit) * kChunk;
    const long long end = begin + kChunk < kGroups ? begin + kChunk : kGroups;
    const long long base = row * kLen;
    // Not unrolled: an Output that divides calls division's slow path, and unrolled calls spill.
#pragma unroll 1
    for (long long g = begin + threadIdx.x; g < end; g += kBlock) {
        if constexpr (kVec == 4)
            *reinterpret_cast<float4*>(out + base + 4 * g) =
                output.at4(base + 4 * g, make_float4(value, value, value, value));
        else
            out[base + g] = output.at(base + g, value);
    }
    if constexpr (kVec == 4 && kLen % 4 != 0) {
        if (blockIdx.x % kSplit == kSplit - 1 && threadIdx.x < kLen % 4) {
            const long long i = base + kGroups * 4 + threadIdx.x;
            out[i] = output.at(i, value);
        }
    }
}
