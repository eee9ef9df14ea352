// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// The input is seen as [kOuter, kLen, kInner] and reduced over kLen, which is cut into kSplit
// slices. Block b handles slice b / kColBlocks for the column groups of block b % kColBlocks:
// consecutive threads take consecutive groups of kVec columns, so loads coalesce. Each slice
// writes one partial per output to scratch, and a second kernel combines the kSplit partials of
// every output in slice order (a fixed order: the result does not depend on timing).
//
// @problem {{PROBLEM}}
// @precision fp32
// @scratch partials int64 {{PARTIAL_WORDS}}
// @launch reduce_column_slices grid({{GRID}}) block({{BLOCK}}) args({{IN_LAUNCH}}, partials)
// @launch combine_slices grid({{COMBINE_GRID}}) block({{BLOCK}}) args(partials, {{OUT}})

constexpr long long kOuter = {{OUTER}};            // slices before the reduced dims
constexpr long long kLen = {{LEN}};                // reduced length
constexpr long long kInner = {{INNER}};            // columns per outer slice
constexpr int kBlock = {{BLOCK}};                  // threads per block
constexpr int kVec = {{VEC}};                      // adjacent columns per thread: 4 (float4) or 1
constexpr int kSplit = {{SPLIT}};                  // slices of the reduced dim
constexpr long long kSlice = kLen / kSplit;        // reduced elements per slice
constexpr long long kGroups = kInner / kVec;       // column groups per outer slice
constexpr long long kColBlocks = {{COL_BLOCKS}};   // blocks covering all column groups
constexpr long long kOutputs = kOuter * kInner;

{{INPUT}}
{{REDUCTION}}
{{>reduction_tree}}

static_assert(sizeof(Reduction::Acc) <= 16, "a partial has 16 bytes of scratch");

extern "C" __global__ void __launch_bounds__(kBlock)
reduce_column_slices({{IN_PARAMS}}, Reduction::Acc* __restrict__ partials)
{
    const Input in{ {{IN_ARGS}} };
    const long long slice = blockIdx.x / kColBlocks;
    const long long g = (blockIdx.x % kColBlocks) * kBlock + threadIdx.x; // the column group
    if (g >= kOuter * kGroups)
        return;
    const long long outer = g / kGroups, col = (g % kGroups) * kVec;
    const long long base = outer * kLen * kInner + col;
    Reduction::Acc acc[kVec];
    fold_columns<kInner>(in, base, slice * kSlice, (slice + 1) * kSlice, acc);
#pragma unroll
    for (int c = 0; c < kVec; ++c)
        partials[slice * kOutputs + outer * kInner + col + c] = acc[c];
}

extern "C" __global__ void __launch_bounds__(kBlock)
combine_slices(const Reduction::Acc* __restrict__ partials, Reduction::Out* __restrict__ out)
{
    const long long o = (long long)blockIdx.x * kBlock + threadIdx.x; // the output element
    if (o >= kOutputs)
        return;
    Reduction::Acc acc = Reduction::identity();
    for (int s = 0; s < kSplit; ++s)
        acc = Reduction::combine(acc, partials[s * kOutputs + o]);
    out[o] = Reduction::finish(acc);
}
