// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// kSplit blocks share each row: block b reduces chunk b % kSplit of row b / kSplit into a partial
// in scratch, then a second kernel combines every row's kSplit partials with one warp (kWarps rows
// per block), in the same order each time. A partial holds the whole accumulator (a double sum, or a value with its
// index); the scratch buffer gives it 16 bytes.
//
// @problem {{PROBLEM}}
// @precision fp32
// @scratch partials int64 {{PARTIAL_WORDS}}
// @launch reduce_chunks grid({{GRID}}) block({{BLOCK}}) args({{IN_LAUNCH}}, partials)
// @launch combine_chunks grid({{COMBINE_GRID}}) block({{BLOCK}}) args(partials, {{OUT}})

constexpr long long kRows = {{ROWS}};         // rows (outputs)
constexpr long long kLen = {{LEN}};           // elements per row
constexpr int kSplit = {{SPLIT}};             // blocks per row
constexpr long long kChunk = kLen / kSplit;   // elements per block
constexpr int kBlock = {{BLOCK}};             // threads per block
constexpr int kVec = {{VEC}};                 // floats per load: 4 (float4) or 1
constexpr int kWarps = kBlock / 32;

{{INPUT}}
{{REDUCTION}}
static_assert(sizeof(Reduction::Acc) <= 16, "a partial has 16 bytes of scratch");
{{>reduction_tree}}

extern "C" __global__ void __launch_bounds__(kBlock)
reduce_chunks({{IN_PARAMS}}, Reduction::Acc* __restrict__ partials)
{
    const Input in{ {{IN_ARGS}} };
    // Row blockIdx.x / kSplit, from its position `first`.
    const long long first = (blockIdx.x % kSplit) * kChunk, base = blockIdx.x / kSplit * kLen + first;
    Reduction::Acc acc = fold_row<kBlock>(in, base, kChunk, threadIdx.x, first);
    acc = block_reduce<kBlock>(acc);
    if (threadIdx.x == 0)
        partials[blockIdx.x] = acc;
}

extern "C" __global__ void __launch_bounds__(kBlock)
combine_chunks(const Reduction::Acc* __restrict__ partials, Reduction::Out* __restrict__ out)
{
    const long long row = (long long)blockIdx.x * kWarps + threadIdx.x / 32; // a warp per row
    const int lane = threadIdx.x % 32;
    if (row >= kRows)
        return;
    Reduction::Acc acc = Reduction::identity();
    for (int s = lane; s < kSplit; s += 32)
        acc = Reduction::combine(acc, partials[row * kSplit + s]);
    acc = warp_reduce(acc);
    if (lane == 0)
        out[row] = Reduction::finish(acc);
}
