// {{TITLE}}
// Built-in idea {{IDEA}}: {{PARAMS}}
// Problem {{PROBLEM}}: {{SUMMARY}}
//
// Few outputs, each the reduction of a long row (a whole tensor to one value: a sum, a mean, a
// loss): the whole GPU works on them in two launches and without atomics, so the result is the
// same in every run. kSplit blocks share each row; every thread keeps its own accumulator (double
// for sums: a float sum of 10^9 values would lose digits) over kUnroll 16-byte loads in flight,
// and each block writes its partial to scratch (INTERLEAVE: the blocks of a row take turns of
// BLOCK loads along it, so the grid's loads in flight stay in one window of the tensor; else each
// walks a chunk of its own). The second kernel gives each row one block, which
// combines the row's kSplit partials in a fixed order and finishes the output. Rows that do not
// start on a 16-byte boundary (several rows, kLen not a multiple of 4) are read 4 bytes at a time.
//
// @problem {{PROBLEM}}
// @precision fp32
// @scratch partials int64 {{PARTIAL_WORDS}}
// @launch reduce_chunks grid({{GRID}}) block({{BLOCK}}) args({{IN_LAUNCH}}, partials)
// @launch combine_chunks grid({{ROWS}}) block({{COMBINE}}) args(partials, {{OUT}})

constexpr long long kRows = {{ROWS}};       // outputs
constexpr long long kLen = {{LEN}};         // elements reduced into each output
constexpr int kSplit = {{SPLIT}};           // blocks per row in the first kernel
constexpr int kBlock = {{BLOCK}};           // threads per block of the first kernel
constexpr int kUnroll = {{UNROLL}};         // loads in flight per thread
constexpr int kCombine = {{COMBINE}};       // threads combining one row's partials
constexpr bool kInterleave = {{INTERLEAVE}}; // a row's blocks take turns along it (else a chunk each)

{{INPUT}}
{{REDUCTION}}
{{>reduce_chunks}}

extern "C" __global__ void __launch_bounds__(kCombine)
combine_chunks(const Reduction::Acc* __restrict__ partials, Reduction::Out* __restrict__ out)
{
    const Reduction::Acc acc = row_partials<kCombine>(partials, blockIdx.x);
    if (threadIdx.x == 0)
        out[blockIdx.x] = Reduction::finish(acc);
}
