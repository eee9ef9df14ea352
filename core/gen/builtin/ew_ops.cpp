#include "gen/builtin/ew_ops.h"

#include <array>
#include <cmath>
#include <cstdio>

namespace kf::builtin {

namespace {

// Full-precision CUDA math (expf, erff, tanhf: a few ulp), so fused chains stay within the strict
// tolerance; the fast intrinsics (__expf) would not.
constexpr std::array kFunctions{
    EwFunction{"relu", 1, "fmaxf($0, 0.0f)", "relu($0)"},
    EwFunction{"relu6", 1, "fminf(fmaxf($0, 0.0f), 6.0f)", "relu6($0)"},
    EwFunction{"sigmoid", 1, "1.0f / (1.0f + expf(-$0))", "sigmoid($0)"},
    EwFunction{"tanh", 1, "tanhf($0)", "tanh($0)"},
    EwFunction{"gelu", 1, "0.5f * $0 * (1.0f + erff($0 * 0.707106781186547524f))", "gelu($0)"},
    EwFunction{"gelu_tanh", 1, "0.5f * $0 * (1.0f + tanhf(0.797884560802865356f * ($0 + 0.044715f * $0 * $0 * $0)))",
               "gelu_tanh($0)"},
    EwFunction{"silu", 1, "$0 / (1.0f + expf(-$0))", "silu($0)"},
    EwFunction{"mish", 1, "$0 * tanhf($0 > 20.0f ? $0 : log1pf(expf($0)))", "mish($0)"},
    EwFunction{"hardsigmoid", 1, "fminf(fmaxf($0 + 3.0f, 0.0f), 6.0f) / 6.0f", "hardsigmoid($0)"},
    EwFunction{"hardswish", 1, "$0 * fminf(fmaxf($0 + 3.0f, 0.0f), 6.0f) / 6.0f", "hardswish($0)"},
    EwFunction{"sqrt", 1, "sqrtf($0)", "sqrt($0)"},
    EwFunction{"rsqrt", 1, "rsqrtf($0)", "rsqrt($0)"},
    EwFunction{"exp", 1, "expf($0)", "exp($0)"},
    EwFunction{"expm1", 1, "expm1f($0)", "expm1($0)"},
    EwFunction{"log", 1, "logf($0)", "log($0)"},
    EwFunction{"log1p", 1, "log1pf($0)", "log1p($0)"},
    EwFunction{"abs", 1, "fabsf($0)", "abs($0)"},
    EwFunction{"neg", 1, "-$0", "-$0"},
    EwFunction{"reciprocal", 1, "1.0f / $0", "1 / $0"},
    EwFunction{"erf", 1, "erff($0)", "erf($0)"},
    EwFunction{"square", 1, "$0 * $0", "$0^2"},
    EwFunction{"sin", 1, "sinf($0)", "sin($0)"},
    EwFunction{"cos", 1, "cosf($0)", "cos($0)"},
    EwFunction{"tan", 1, "tanf($0)", "tan($0)"},
    EwFunction{"atan", 1, "atanf($0)", "atan($0)"},
    EwFunction{"sinh", 1, "sinhf($0)", "sinh($0)"},
    EwFunction{"cosh", 1, "coshf($0)", "cosh($0)"},
    EwFunction{"log2", 1, "log2f($0)", "log2($0)"},
    EwFunction{"log10", 1, "log10f($0)", "log10($0)"},
    EwFunction{"exp2", 1, "exp2f($0)", "exp2($0)"},
    EwFunction{"floor", 1, "floorf($0)", "floor($0)"},
    EwFunction{"ceil", 1, "ceilf($0)", "ceil($0)"},
    EwFunction{"trunc", 1, "truncf($0)", "trunc($0)"},
    // torch.round rounds halves to even, as rintf does (roundf would round them away from zero).
    EwFunction{"round", 1, "rintf($0)", "round($0)"},
    EwFunction{"sign", 1, "float(($0 > 0.0f) - ($0 < 0.0f))", "sign($0)"},
    // SELU's fixed alpha and scale (and their product for the negative side).
    EwFunction{"selu", 1, "($0 > 0.0f ? 1.05070098735548049f * $0 : 1.75809934084737685f * expm1f($0))", "selu($0)"},
    // log(sigmoid(x)) without overflow: min(x, 0) - log1p(exp(-|x|)).
    EwFunction{"log_sigmoid", 1, "(fminf($0, 0.0f) - log1pf(expf(-fabsf($0))))", "log_sigmoid($0)"},
    EwFunction{"add", 2, "$0 + $1", "$0 + $1"},
    EwFunction{"sub", 2, "$0 - $1", "$0 - $1"},
    EwFunction{"mul", 2, "$0 * $1", "$0 * $1"},
    EwFunction{"div", 2, "$0 / $1", "$0 / $1"},
    EwFunction{"max", 2, "fmaxf($0, $1)", "max($0, $1)"},
    EwFunction{"min", 2, "fminf($0, $1)", "min($0, $1)"},
    EwFunction{"pow", 2, "powf($0, $1)", "pow($0, $1)"},
    EwFunction{"leaky_relu", 2, "($0 > 0.0f ? $0 : $0 * $1)", "leaky_relu($0, $1)"},
    EwFunction{"elu", 2, "($0 > 0.0f ? $0 : $1 * expm1f($0))", "elu($0, $1)"},
    EwFunction{"celu", 2, "($0 > 0.0f ? $0 : $1 * expm1f($0 / $1))", "celu($0, $1)"},
    EwFunction{"hardshrink", 2, "(fabsf($0) > $1 ? $0 : 0.0f)", "hardshrink($0, $1)"},
    EwFunction{"softshrink", 2, "($0 > $1 ? $0 - $1 : ($0 < -($1) ? $0 + $1 : 0.0f))", "softshrink($0, $1)"},
    EwFunction{"threshold", 3, "($0 > $1 ? $0 : $2)", "threshold($0, $1, $2)"},
    EwFunction{"softplus", 3, "($0 * $1 > $2 ? $0 : log1pf(expf($0 * $1)) / $1)", "softplus($0, $1, $2)"},
    EwFunction{"clamp", 3, "fminf(fmaxf($0, $1), $2)", "clamp($0, $1, $2)"},
    // The terms of losses, of |a - b| and the loss's beta or delta; x log x as PyTorch's xlogy(x, x).
    EwFunction{"smooth_l1", 2, "($0 < $1 ? 0.5f * $0 * $0 / $1 : $0 - 0.5f * $1)", "smooth_l1($0, $1)"},
    EwFunction{"huber", 2, "($0 < $1 ? 0.5f * $0 * $0 : $1 * ($0 - 0.5f * $1))", "huber($0, $1)"},
    EwFunction{"xlogx", 1, "($0 == 0.0f ? 0.0f : $0 * logf($0))", "xlogx($0)"},
    // torch.triu / tril: the value where a triangle mask (pattern.h) is 1, else 0 (NaN included).
    EwFunction{"keep", 2, "($1 != 0.0f ? $0 : 0.0f)", "$1 of $0"},
    // Comparisons give a bool, 1 or 0 as the ops after them promote it (NaN compares unequal).
    EwFunction{"eq", 2, "($0 == $1 ? 1.0f : 0.0f)", "($0 == $1)"},
    EwFunction{"ne", 2, "($0 != $1 ? 1.0f : 0.0f)", "($0 != $1)"},
    EwFunction{"gt", 2, "($0 > $1 ? 1.0f : 0.0f)", "($0 > $1)"},
    EwFunction{"ge", 2, "($0 >= $1 ? 1.0f : 0.0f)", "($0 >= $1)"},
    EwFunction{"lt", 2, "($0 < $1 ? 1.0f : 0.0f)", "($0 < $1)"},
    EwFunction{"le", 2, "($0 <= $1 ? 1.0f : 0.0f)", "($0 <= $1)"},
    // torch.where(cond, a, b), masked_fill(x, mask, v) as where(mask, v, x): cond is 1 or 0.
    EwFunction{"where", 3, "($0 != 0.0f ? $1 : $2)", "where($0, $1, $2)"},
};

// aten ops that map one to one onto a unary function of the table.
constexpr std::array<std::pair<std::string_view, std::string_view>, 34> kUnary{{
    {"relu", "relu"},
    {"relu6", "relu6"},
    {"sigmoid", "sigmoid"},
    {"tanh", "tanh"},
    {"silu", "silu"},
    {"mish", "mish"},
    {"hardsigmoid", "hardsigmoid"},
    {"hardswish", "hardswish"},
    {"sqrt", "sqrt"},
    {"rsqrt", "rsqrt"},
    {"exp", "exp"},
    {"expm1", "expm1"},
    {"log", "log"},
    {"log1p", "log1p"},
    {"abs", "abs"},
    {"neg", "neg"},
    {"reciprocal", "reciprocal"},
    {"erf", "erf"},
    {"square", "square"},
    {"sin", "sin"},
    {"cos", "cos"},
    {"tan", "tan"},
    {"atan", "atan"},
    {"sinh", "sinh"},
    {"cosh", "cosh"},
    {"log2", "log2"},
    {"log10", "log10"},
    {"exp2", "exp2"},
    {"floor", "floor"},
    {"ceil", "ceil"},
    {"trunc", "trunc"},
    {"sign", "sign"},
    {"selu", "selu"},
    {"log_sigmoid", "log_sigmoid"},
}};

constexpr std::string_view kOthers[] = {
    "gelu", "add",        "sub",        "rsub",      "mul",       "div",      "true_divide", "maximum",    "minimum",
    "max",  "min",        "clamp",      "clamp_min", "clamp_max", "hardtanh", "leaky_relu",  "softplus",   "elu",
    "celu", "hardshrink", "softshrink", "threshold", "pow",       "dropout",  "round",       "triu",       "tril",
    "eq",   "ne",         "gt",         "ge",        "lt",        "le",       "where",       "masked_fill"};

std::string_view shortName(std::string_view op)
{
    constexpr std::string_view prefix = "aten::";
    return op.substr(0, prefix.size()) == prefix ? op.substr(prefix.size()) : op;
}

Error unsupported(const std::string &op, const std::string &what)
{
    return makeError(ErrorCode::Unsupported, op + " " + what + " is not fused by the built-in generator");
}

} // namespace

const EwFunction *findEwFunction(std::string_view name)
{
    for (const auto &f : kFunctions)
        if (f.name == name)
            return &f;
    return nullptr;
}

std::string floatLiteral(double v)
{
    // NVRTC has no math.h, so no INFINITY macro: spell the bit pattern.
    if (std::isinf(v))
        return v > 0 ? "__int_as_float(0x7f800000)" : "-__int_as_float(0x7f800000)";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    std::string s = buf;
    if (s.find_first_of(".en") == std::string::npos)
        s += ".0";
    return s + "f";
}

bool isElementwiseOp(std::string_view op)
{
    std::string_view name = shortName(op);
    for (const auto &[aten, fn] : kUnary)
        if (aten == name)
            return true;
    for (std::string_view o : kOthers)
        if (o == name)
            return true;
    return false;
}

std::vector<std::string> elementwiseOps()
{
    std::vector<std::string> out;
    for (const auto &[aten, fn] : kUnary)
        out.push_back("aten::" + std::string(aten));
    for (std::string_view o : kOthers)
        out.push_back("aten::" + std::string(o));
    return out;
}

namespace {

// The operands of one aten op as the elementwise table reads them, and the steps it appends.
struct OpReader {
    EwProgram &program;
    const std::string &op;
    const std::vector<OpOperand> &operands;

    EwArg self() const { return operands[0].arg; }
    bool tensorAt(std::size_t i) const { return i < operands.size() && operands[i].kind == OpOperand::Kind::Tensor; }
    const nlohmann::json *constAt(std::size_t i) const
    {
        if (i >= operands.size() || operands[i].kind != OpOperand::Kind::Constant)
            return nullptr;
        return &operands[i].constant;
    }
    // A number argument (a tensor or a constant), or the default when the constant is None.
    std::optional<EwArg> number(std::size_t i, double fallback) const
    {
        if (tensorAt(i))
            return operands[i].arg;
        const nlohmann::json *c = constAt(i);
        if (!c || c->is_null())
            return EwArg::scalar(fallback);
        if (c->is_number())
            return EwArg::scalar(c->get<double>());
        if (c->is_boolean())
            return EwArg::scalar(c->get<bool>() ? 1.0 : 0.0);
        return std::nullopt;
    }
    EwArg emit(std::string fn, std::vector<EwArg> args)
    {
        program.steps.push_back(EwStep{std::move(fn), std::move(args), op});
        return EwArg::step(int(program.steps.size()) - 1);
    }
};

// add, sub, rsub, mul, div, true_divide, the comparisons, where, masked_fill and the two-tensor
// maximum / minimum; none for other ops.
std::optional<Result<EwArg>> arithmetic(OpReader &r, std::string_view name)
{
    const EwArg self = r.self();
    if (name == "add" || name == "sub" || name == "rsub") {
        auto other = r.number(1, 0), alpha = r.number(2, 1);
        if (!other || !alpha)
            return unsupported(r.op, "with a non-numeric argument");
        // add/sub: self op alpha * other; rsub: other - alpha * self.
        EwArg base = self, scaled = *other;
        if (name == "rsub") {
            base = *other;
            scaled = self;
        }
        if (!(alpha->kind == EwArg::Kind::Scalar && alpha->value == 1.0))
            scaled = r.emit("mul", {scaled, *alpha});
        return r.emit(name == "add" ? "add" : "sub", {base, scaled});
    }
    if (name == "mul" || name == "div" || name == "true_divide") {
        if (name == "div") {
            const nlohmann::json *mode = r.constAt(2);
            if (mode && !mode->is_null())
                return unsupported(r.op, "with a rounding mode");
        }
        auto other = r.number(1, 1);
        if (!other)
            return unsupported(r.op, "with a non-numeric argument");
        return r.emit(name == "mul" ? "mul" : "div", {self, *other});
    }
    if (name == "eq" || name == "ne" || name == "gt" || name == "ge" || name == "lt" || name == "le") {
        auto other = r.number(1, 0);
        if (!other || (!r.tensorAt(1) && !(r.constAt(1) && r.constAt(1)->is_number())))
            return unsupported(r.op, "with a non-numeric argument");
        // A number float32 holds exactly compares the same in float and in double. Another (0.1)
        // does not: x = 0.1f is above 0.1 in double but not in float, and the GPU reference and
        // the kernel would disagree on such elements.
        if (other->kind == EwArg::Kind::Scalar && double(float(other->value)) != other->value)
            return unsupported(r.op,
                               "with " + floatLiteral(other->value) +
                                   ", which float32 does not hold exactly (a comparison with it "
                                   "depends on the precision it is made in)");
        return r.emit(std::string(name), {self, *other});
    }
    if (name == "where" || name == "masked_fill") {
        // where(cond, a, b); masked_fill(x, mask, value) is where(mask, value, x).
        auto a = r.number(1, 0), b = r.number(2, 0);
        if (!a || !b || r.operands.size() != 3 || (!r.tensorAt(1) && !r.constAt(1)->is_number()) ||
            (!r.tensorAt(2) && !r.constAt(2)->is_number()))
            return unsupported(r.op, "with a non-numeric argument");
        if (name == "where")
            return r.emit("where", {self, *a, *b});
        return r.emit("where", {*a, *b, self});
    }
    if (name == "maximum" || name == "minimum" || name == "max" || name == "min") {
        if (!r.tensorAt(1))
            return unsupported(r.op, "as a reduction"); // the recogniser routes those elsewhere
        return r.emit(name == "maximum" || name == "max" ? "max" : "min", {self, r.operands[1].arg});
    }
    return std::nullopt;
}

// The clamps and the activations with numeric parameters; none for other ops.
std::optional<Result<EwArg>> parametric(OpReader &r, std::string_view name)
{
    const EwArg self = r.self();
    if (name == "clamp" || name == "clamp_min" || name == "clamp_max" || name == "hardtanh") {
        double lowDefault = name == "hardtanh" ? -1.0 : -INFINITY, highDefault = name == "hardtanh" ? 1.0 : INFINITY;
        std::optional<EwArg> lo = EwArg::scalar(lowDefault), hi = EwArg::scalar(highDefault);
        if (name == "clamp_max")
            hi = r.number(1, highDefault);
        else
            lo = r.number(1, lowDefault);
        if (name == "clamp" || name == "hardtanh")
            hi = r.number(2, highDefault);
        if (!lo || !hi)
            return unsupported(r.op, "with a non-numeric bound");
        return r.emit("clamp", {self, *lo, *hi});
    }
    if (name == "leaky_relu") {
        auto slope = r.number(1, 0.01);
        if (!slope)
            return unsupported(r.op, "with a non-numeric slope");
        return r.emit("leaky_relu", {self, *slope});
    }
    if (name == "softplus") {
        auto beta = r.number(1, 1), threshold = r.number(2, 20);
        if (!beta || !threshold)
            return unsupported(r.op, "with non-numeric arguments");
        return r.emit("softplus", {self, *beta, *threshold});
    }
    if (name == "elu") {
        auto alpha = r.number(1, 1), scale = r.number(2, 1), inputScale = r.number(3, 1);
        if (!alpha || !scale || !inputScale || scale->value != 1.0 || inputScale->value != 1.0)
            return unsupported(r.op, "with a scale");
        return r.emit("elu", {self, *alpha});
    }
    if (name == "celu" || name == "hardshrink" || name == "softshrink") {
        auto param = r.number(1, name == "celu" ? 1.0 : 0.5); // alpha, or lambd
        if (!param)
            return unsupported(r.op, "with a non-numeric parameter");
        return r.emit(std::string(name), {self, *param});
    }
    if (name == "threshold") {
        auto threshold = r.number(1, 0), value = r.number(2, 0);
        if (!threshold || !value)
            return unsupported(r.op, "with non-numeric arguments");
        return r.emit("threshold", {self, *threshold, *value});
    }
    return std::nullopt;
}

// gelu's two forms, round to an integer, dropout in eval mode and pow (its common exponents as exact, cheaper ops).
std::optional<Result<EwArg>> special(OpReader &r, std::string_view name)
{
    const EwArg self = r.self();
    if (name == "gelu") {
        const nlohmann::json *mode = r.constAt(1);
        std::string approx = mode && mode->is_string() ? mode->get<std::string>() : "none";
        if (approx == "none")
            return r.emit("gelu", {self});
        if (approx == "tanh")
            return r.emit("gelu_tanh", {self});
        return unsupported(r.op, "with approximate='" + approx + "'");
    }
    if (name == "round") {
        const nlohmann::json *decimals = r.constAt(1);
        if (decimals && decimals->is_number() && decimals->get<double>() != 0)
            return unsupported(r.op, "to decimals");
        return r.emit("round", {self});
    }
    if (name == "dropout") {
        const nlohmann::json *train = r.constAt(2);
        if (train && train->is_boolean() && !train->get<bool>())
            return self; // eval mode: identity
        return unsupported(r.op, "in training mode");
    }
    if (name == "pow") {
        auto e = r.number(1, 1);
        if (!e)
            return unsupported(r.op, "with a non-numeric exponent");
        if (e->kind == EwArg::Kind::Scalar) {
            if (e->value == 1.0)
                return self;
            if (e->value == 2.0)
                return r.emit("square", {self});
            if (e->value == 0.5)
                return r.emit("sqrt", {self});
            if (e->value == -0.5)
                return r.emit("rsqrt", {self});
            if (e->value == -1.0)
                return r.emit("reciprocal", {self});
        }
        return r.emit("pow", {self, *e});
    }
    return std::nullopt;
}

} // namespace

Result<EwArg> appendElementwise(EwProgram &program, const std::string &op, const std::vector<OpOperand> &operands)
{
    const std::string_view name = shortName(op);
    OpReader r{program, op, operands};
    if (!r.tensorAt(0)) {
        // aten::rsub and friends always take the tensor first; a scalar first means a scalar op.
        return unsupported(op, "on a scalar first argument");
    }
    for (const auto &[aten, fn] : kUnary)
        if (aten == name)
            return r.emit(std::string(fn), {r.self()});
    for (auto family : {arithmetic, parametric, special})
        if (auto done = family(r, name))
            return *done;
    return makeError(ErrorCode::Unsupported, op + " is not an elementwise op the built-in generator knows");
}

std::string stepExpression(const EwStep &step, const std::vector<std::string> &args)
{
    const EwFunction *f = findEwFunction(step.fn);
    if (!f)
        return "/* unknown " + step.fn + " */ 0.0f";
    // A division by a number is a product with its float reciprocal, as PyTorch's CUDA kernel
    // computes it (the number as float, 1 / it in float): the same results, and one multiply
    // where an IEEE division costs about ten instructions.
    if (step.fn == "div" && step.args.size() == 2 && step.args[1].kind == EwArg::Kind::Scalar && args.size() == 2) {
        const float inverse = 1.0f / float(step.args[1].value);
        if (std::isnormal(float(step.args[1].value)) && std::isnormal(inverse))
            return args[0] + " * " + floatLiteral(double(inverse));
    }
    std::string out;
    std::string_view t = f->cuda;
    for (std::size_t i = 0; i < t.size(); ++i) {
        if (t[i] == '$' && i + 1 < t.size() && t[i + 1] >= '0' && t[i + 1] <= '9') {
            std::size_t k = std::size_t(t[i + 1] - '0');
            out += k < args.size() ? args[k] : "0.0f";
            ++i;
        } else {
            out += t[i];
        }
    }
    return out;
}

} // namespace kf::builtin
