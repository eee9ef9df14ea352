#pragma once
// The elementwise functions the built-in generator fuses, with their CUDA expressions, and the
// translation of aten elementwise ops into steps of an EwProgram.
#include "gen/builtin/pattern.h"

#include <string>
#include <string_view>
#include <vector>

namespace kf::builtin {

struct EwFunction {
    std::string_view name; // "gelu"
    int arity;             // operands, scalars included
    std::string_view cuda; // "0.5f * $0 * (1.0f + erff($0 * 0.70710678118654752f))"
    std::string_view text; // "gelu($0)", for the chain's description
};

const EwFunction *findEwFunction(std::string_view name);

// A float literal that CUDA reads back as the same float ("0.5f", "1e-05f", "2.0f").
std::string floatLiteral(double);

// One operand of an aten op as the recogniser resolved it.
struct OpOperand {
    enum class Kind { Tensor, Constant };
    Kind kind = Kind::Constant;
    EwArg arg;               // for tensors: where the value lives in the program
    nlohmann::json constant; // for constants (null for None)
};

// Whether `op` is an elementwise aten op the generator can fuse.
bool isElementwiseOp(std::string_view op);
// Every such op ("aten::relu", ...), for the coverage list.
std::vector<std::string> elementwiseOps();

// Appends the steps for one elementwise aten op to `program` and returns the argument that holds
// its result. The error names the op and the argument it cannot handle.
Result<EwArg> appendElementwise(EwProgram &program, const std::string &op, const std::vector<OpOperand> &operands);

// CUDA for one step, given the C++ expressions of its arguments.
std::string stepExpression(const EwStep &, const std::vector<std::string> &args);

} // namespace kf::builtin
