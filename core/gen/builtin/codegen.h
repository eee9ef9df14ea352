#pragma once
// The problem-specific pieces of CUDA that templates take as placeholders: the struct that reads
// and combines a fused elementwise program's operands, the reduction operator, and the affine
// step of a normalization. Everything else in a generated kernel comes from its template.
#include "gen/builtin/pattern.h"

#include <string>

namespace kf::builtin {

// A C++ identifier for a problem tensor: its own name unless the templates use that name.
std::string cudaName(const std::string &tensor);

struct OperandCode {
    std::string code;    // the struct definition
    std::string params;  // kernel parameters: "const float* __restrict__ x, const float* __restrict__ bias"
    std::string args;    // the struct's initialiser inside the kernel: "x, bias"
    std::string launch;  // @launch arguments (problem tensor names): "x, bias"
    std::string text;    // "relu(x + bias)"
};

enum class Loads {
    ReadOnly,  // __ldg: the read-only data cache
    Streaming, // __ldcs: evict-first, for data touched once
};

// `name` is the struct's name (Chain for elementwise problems, Input for the input of a row op).
// The struct has at(i), one element by flat index, and at4(i), four consecutive elements from an i
// that is a multiple of 4: 16-byte loads where an operand has the program's shape.
OperandCode emitProgram(const EwProgram &, const std::string &name, Loads loads = Loads::ReadOnly);

// The reduction operator of a Reduce pattern: struct Reduction { Acc, Out, identity, lift,
// combine, shfl_xor, finish }. Sums accumulate in double: memory-bound kernels have fp64 to spare.
std::string emitReduction(const Pattern &);
std::string reductionOutType(const Pattern &); // "float" or "long long"

struct AffineCode {
    std::string code;   // struct Affine { apply(y, col), apply4(y, col) }
    std::string params; // ", const float* __restrict__ weight, ..." (empty when there is no affine)
    std::string args;   // "weight, bias"
    std::string launch; // ", weight, bias"
};
AffineCode emitAffine(const Pattern &);

} // namespace kf::builtin
