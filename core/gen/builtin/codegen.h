#pragma once
// The problem-specific pieces of CUDA that templates take as placeholders: the struct that reads
// and combines a fused elementwise program's operands, the reduction operator, and the affine
// step of a normalization. Everything else in a generated kernel comes from its template.
#include "gen/builtin/pattern.h"

#include <set>
#include <string>
#include <vector>

namespace kf::builtin {

// A C++ identifier for a problem tensor: its own name unless the templates use that name.
std::string cudaName(const std::string &tensor);

struct OperandCode {
    std::string code;            // the struct definition
    std::string params;          // kernel parameters: "const float* __restrict__ x, const float* __restrict__ bias"
    std::string args;            // the struct's initialiser inside the kernel: "x, bias"
    std::string launch;          // @launch arguments (problem tensor names): "x, bias"
    std::string text;            // "relu(x + bias)"
    std::set<std::string> names; // the kernel parameter names of `params`
};

enum class Loads {
    ReadOnly,  // __ldg: the read-only data cache
    Streaming, // __ldcs: evict-first, for data touched once
    // Plain loads through const __restrict__ pointers: the compiler still uses the read-only path,
    // and, unlike the intrinsics (volatile asm), loads an element once for every struct of the
    // kernel that reads it.
    Plain,
    // ld_kept(p): marked evict-last in L2, for small operands read again and again while other data
    // streams past; the template defines ld_kept (float and float4 with the hint, __ldg otherwise).
    Kept,
};

// `name` is the struct's name (Chain for elementwise problems, Input for the input of a row op,
// Output for the epilogue of one). The struct has at(i), one element by flat index, and at4(i),
// four consecutive elements from an i that is a multiple of 4: 16-byte loads where an operand has
// the program's shape. A program that reads Acc(0) (an epilogue: the row op's result, or a row's
// statistic) takes it as a second argument, at(i, acc) and at4(i, acc4). Members are renamed away
// from `taken` (the kernel parameters of another struct of the same kernel). With `held` (a tensor
// the kernel keeps in registers), the struct also has raw(i), that tensor's element i as loaded,
// at_held(i, h[, acc]), element i with h standing for every read of that tensor at i, and
// held_data(), where that tensor lies.
OperandCode emitProgram(const EwProgram &, const std::string &name, Loads loads = Loads::ReadOnly,
                        const std::set<std::string> &taken = {}, const std::string &held = "");
// Whether `tensor` is read by `program` only where its element is the program's own (a full-shape
// fp32 leaf), at least once: what at_held can stand in for.
bool readsOnlyInPlace(const EwProgram &, const std::string &tensor);
bool usesAcc(const EwProgram &);

// The reduction operator of a Reduce pattern: struct Reduction { Acc, Out, identity, lift,
// combine, shfl_xor, finish }. Sums accumulate in double: memory-bound kernels have fp64 to spare.
std::string emitReduction(const Pattern &);
std::string reductionOutType(const Pattern &); // "float" or "long long"

// The epilogue of a matrix product or convolution template: a float expression of the template's
// `acc` (the product, the program's Acc(0)), `row` and `col`, evaluated once per output element.
// The output's row-major flat index is given as segments, innermost first, each an int expression
// of row, col (and whatever else the template has in scope): a GEMM's [rows, N] output is
// {1, N, "col"}, {N, rows, "row"}; an NCHW convolution's {1, OH*OW, "(row % P)"}, {OH*OW, C, "col"},
// {C*OH*OW, batch, "(row / P)"}. Leaves are read through them (bias[col] for a per-column bias).
struct IndexSegment {
    std::int64_t stride = 1; // flat stride of the segment's first element
    std::int64_t extent = 1;
    std::string expr; // its index, parenthesized where it is not a name
};

struct EpilogueCode {
    std::string expr;   // "fmaxf(acc + __ldg(bias + col), 0.0f)"
    std::string params; // ", const float *__restrict__ bias" (empty without leaves)
    std::string args;   // @launch arguments: ", bias"
    std::string text;   // "relu(acc + bias)"
};

// Kernel parameters are named after their tensors, renamed away from `taken` (the template's own
// identifiers) and from the names cudaName reserves.
EpilogueCode emitEpilogue(const EwProgram &, const std::vector<IndexSegment> &index,
                          const std::set<std::string> &taken);

// The identifiers of a template's code (comments and placeholders left out).
std::set<std::string> identifiersOf(const std::string &templateText);

} // namespace kf::builtin
