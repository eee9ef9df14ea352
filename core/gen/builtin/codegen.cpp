#include "gen/builtin/codegen.h"

#include "gen/builtin/ew_ops.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <functional>
#include <map>
#include <set>

namespace kf::builtin {

namespace {

// Names the templates use for their own variables and helpers, and C++ words: a kernel parameter
// of the same name would collide with them. Single letters other than x are all taken.
const std::set<std::string> &reserved()
{
    static const std::set<std::string> names = [] {
        std::set<std::string> n{
            // locals and helpers of the templates
            "in", "out", "chain", "affine", "stride", "tile", "acc", "row", "lane", "warp", "base", "first", "outer",
            "col", "slice", "part", "scale", "st", "mean", "squares", "rstd", "shift", "s1", "s2", "mean_d", "var",
            "stats", "partials", "partial", "cluster", "rank", "published", "row_max", "row_sum", "merged", "peer",
            "apply", "at", "at4", "apply4", "merge", "push", "push4", "minus", "store4", "store4_streaming", "finish4",
            "exp_sum", "warp_sum", "warp_max", "block_sum", "block_max", "warp_reduce", "block_reduce", "warp_merge",
            "block_merge", "row_scale", "softmax_out", "sum4", "squares4", "cg", "count", "delta", "Input", "Chain",
            "Reduction", "Affine", "MaxSum", "Welford", "ValueIndex",
            // C++ and CUDA words
            "float", "double", "int", "long", "short", "char", "bool", "void", "auto", "const", "static", "struct",
            "class", "union", "enum", "return", "if", "else", "for", "while", "do", "switch", "case", "default",
            "break", "continue", "goto", "this", "new", "delete", "operator", "template", "typename", "using",
            "namespace", "signed", "unsigned", "volatile", "register", "extern", "inline", "sizeof", "true", "false",
            "nullptr", "constexpr", "decltype", "friend", "private", "public", "protected", "virtual", "mutable",
            "explicit", "typedef", "asm", "try", "catch", "throw", "and", "or", "not", "xor", "min", "max", "float2",
            "float4", "dim3", "half", "size_t", "threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize"};
        for (char c = 'a'; c <= 'z'; ++c)
            if (c != 'x')
                n.insert(std::string(1, c));
        return n;
    }();
    return names;
}

std::string join(const std::vector<std::string> &parts, const std::string &sep)
{
    std::string out;
    for (std::size_t i = 0; i < parts.size(); ++i)
        out += (i ? sep : "") + parts[i];
    return out;
}

// The index of a broadcast leaf for output index `var`, from its terms.
std::string indexExpr(const std::vector<IndexTerm> &terms, const std::string &var, std::int64_t outNumel)
{
    if (terms.empty())
        return var;
    std::vector<std::string> parts;
    for (const IndexTerm &t : terms) {
        if (t.stride == 0) {
            parts.push_back("0");
            continue;
        }
        std::string p = var;
        if (t.div != 1)
            p += " / " + std::to_string(t.div);
        if (t.div * t.mod != outNumel)
            p += " % " + std::to_string(t.mod);
        if (t.stride != 1)
            p += " * " + std::to_string(t.stride);
        parts.push_back(p);
    }
    return join(parts, " + ");
}

enum class Vec4Kind { Same, Contiguous, Uniform, PerLane };

Vec4Kind vec4Kind(const std::vector<IndexTerm> &terms)
{
    if (terms.empty())
        return Vec4Kind::Same;
    bool uniform = true;
    for (const IndexTerm &t : terms)
        uniform = uniform && (t.stride == 0 || t.div % 4 == 0);
    if (uniform)
        return Vec4Kind::Uniform;
    const IndexTerm &inner = terms.front();
    if (inner.div == 1 && inner.stride == 1 && inner.mod % 4 == 0)
        return Vec4Kind::Contiguous;
    return Vec4Kind::PerLane;
}

// A computed leaf's value (pattern.h) at the element whose flat index in the leaf's shape is `j`:
// a triangle mask's 1.0f or 0.0f, from its column minus its row; a position, j itself.
std::string maskValue(const Leaf &l, const std::string &j)
{
    if (l.mask == Leaf::Mask::Index)
        return "(float)(" + j + ")";
    const std::string n = std::to_string(l.shape.back());
    const std::string offset = "(long long)(" + j + ") % " + n + " - (long long)(" + j + ") / " + n;
    return "((" + offset + (l.mask == Leaf::Mask::Upper ? " >= " : " <= ") + std::to_string(l.diagonal) +
        "LL) ? 1.0f : 0.0f)";
}

// A bool tensor is read as bytes (what the engine's bool tensors hold), an int64 one as long longs,
// a float32 one as floats.
bool bytes(const Leaf &l) { return l.dtype == DType::Bool; }
bool longs(const Leaf &l) { return l.dtype == DType::I64; }
std::string elementType(const Leaf &l) { return bytes(l) ? "unsigned char" : longs(l) ? "long long" : "float"; }
// A loaded element as the float the program computes with: a bool is 1 or 0, an int64 the float
// nearest it (exact below 2^24; PyTorch's promotion of int64 to float32 rounds the same way).
std::string asFloat(const Leaf &l, const std::string &load)
{
    return bytes(l) ? "float(" + load + " != 0)" : longs(l) ? "(float)(" + load + ")" : load;
}
// A program that reads bytes loads every operand through plain loads of its const __restrict__
// pointers (still the read-only path): ptxas spilled around the intrinsics' volatile loads mixed
// with byte loads (a scan of 16 elements a thread: 12 to 16 bytes of spills; none with plain loads).
std::string loadsOf(const EwProgram &p, const std::string &ld)
{
    return std::any_of(p.leaves.begin(), p.leaves.end(), bytes) ? std::string("*") : ld;
}

// The names of a program's operands in the struct: one member per distinct tensor (renamed away
// from `taken`, another struct's kernel parameters), one apply() parameter per leaf.
struct OperandNames {
    std::vector<std::string> members;            // the distinct tensors, in order of first read
    std::map<std::string, std::string> memberOf; // tensor -> member
    std::vector<std::string> leafVar;            // leaf -> apply() parameter
};

OperandNames operandNames(const EwProgram &p, const std::set<std::string> &taken)
{
    OperandNames o;
    std::set<std::string> memberNames = taken;
    for (const Leaf &l : p.leaves)
        if (!l.isMask() && !o.memberOf.count(l.tensor)) {
            std::string m = cudaName(l.tensor);
            while (memberNames.count(m))
                m += "_";
            memberNames.insert(m);
            o.memberOf[l.tensor] = m;
            o.members.push_back(l.tensor);
        }
    std::set<std::string> vars;
    for (std::size_t k = 0; k < p.leaves.size(); ++k) {
        std::string v = p.leaves[k].mask == Leaf::Mask::Index ? "position"
            : p.leaves[k].isMask()                            ? "mask"
                                                              : o.memberOf[p.leaves[k].tensor];
        if (vars.count(v))
            v += "_" + std::to_string(k);
        vars.insert(v);
        o.leafVar.push_back(v);
    }
    return o;
}

// apply(): the computation on one element's operands, in registers.
std::string applyFunction(const EwProgram &p, const OperandNames &o, bool acc)
{
    std::vector<std::string> applyParams;
    for (const std::string &v : o.leafVar)
        applyParams.push_back("float " + v);
    if (acc)
        applyParams.push_back("float acc");
    auto argExpr = [&](const EwArg &a) -> std::string {
        switch (a.kind) {
        case EwArg::Kind::Leaf:
            return o.leafVar[std::size_t(a.index)];
        case EwArg::Kind::Step:
            return "t" + std::to_string(a.index);
        case EwArg::Kind::Scalar:
            return floatLiteral(a.value);
        case EwArg::Kind::Acc:
            return "acc";
        }
        return "0.0f";
    };
    std::string code = "\n    static __device__ __forceinline__ float apply(" + join(applyParams, ", ") + ")\n    {\n";
    for (std::size_t k = 0; k < p.steps.size(); ++k) {
        std::vector<std::string> args;
        for (const EwArg &a : p.steps[k].args)
            args.push_back(argExpr(a));
        code += "        const float t" + std::to_string(k) + " = " + stepExpression(p.steps[k], args) + ";\n";
    }
    return code + "        return " + argExpr(p.result) + ";\n    }\n";
}

// at(i): one element.
std::string atFunction(const EwProgram &p, const OperandNames &o, const std::string &ld, bool acc)
{
    const std::int64_t n = numel(p.shape);
    std::vector<std::string> scalarLoads;
    for (std::size_t k = 0; k < p.leaves.size(); ++k) {
        auto terms = indexTerms(p.leaves[k], p.shape);
        std::string idx = indexExpr(terms, "i", n);
        if (p.leaves[k].isMask())
            scalarLoads.push_back(maskValue(p.leaves[k], idx));
        else
            scalarLoads.push_back(asFloat(p.leaves[k],
                                          ld + "(" + o.memberOf.at(p.leaves[k].tensor) + " + " +
                                              (terms.empty() ? idx : "(" + idx + ")") + ")"));
    }
    if (acc)
        scalarLoads.push_back("acc");
    std::string code = "\n    // Element i of the " + shapeText(p.shape) + " result.\n";
    code += std::string("    __device__ __forceinline__ float at(long long i") + (acc ? ", float acc" : "") +
        ") const\n    {\n";
    if (p.leaves.empty())
        code += "        (void)i;\n";
    return code + "        return apply(" + join(scalarLoads, ", ") + ");\n    }\n";
}

// at_held(i, h): one element, h standing for the reads of `held` at i (the kernel loaded them
// already); raw(i): that tensor's element i as loaded.
std::string heldFunctions(const EwProgram &p, const OperandNames &o, const std::string &ld, bool acc,
                          const std::string &held)
{
    const std::int64_t n = numel(p.shape);
    std::vector<std::string> values;
    for (const Leaf &leaf : p.leaves) {
        auto terms = indexTerms(leaf, p.shape);
        std::string idx = indexExpr(terms, "i", n);
        if (leaf.isMask())
            values.push_back(maskValue(leaf, idx));
        else if (leaf.tensor == held && terms.empty())
            values.push_back("h");
        else
            values.push_back(asFloat(
                leaf, ld + "(" + o.memberOf.at(leaf.tensor) + " + " + (terms.empty() ? idx : "(" + idx + ")") + ")"));
    }
    if (acc)
        values.push_back("acc");
    std::string code = "\n    // Element i, h standing for " + held + "[i] (already in registers).\n";
    code += std::string("    __device__ __forceinline__ float at_held(long long i, float h") +
        (acc ? ", float acc" : "") + ") const\n    {\n        (void)i;\n        return apply(" + join(values, ", ") +
        ");\n    }\n";
    code += "    // Where " + held + " lies, for a kernel that copies it in bulk.\n";
    code += "    __device__ __forceinline__ const float* held_data() const { return " + o.memberOf.at(held) + "; }\n";
    code += "    // " + held + "[i] as loaded.\n";
    code += "    __device__ __forceinline__ float raw(long long i) const { return " + ld + "(" + o.memberOf.at(held) +
        " + i); }\n";
    return code;
}

// at4(i): four elements; 16-byte loads for full-shape and contiguous broadcast operands.
std::string at4Function(const EwProgram &p, const OperandNames &o, const std::string &ld, bool acc)
{
    const std::int64_t n = numel(p.shape);
    std::string body;
    std::vector<std::array<std::string, 4>> lanes(p.leaves.size());
    static const char *comp[4] = {"x", "y", "z", "w"};
    for (std::size_t k = 0; k < p.leaves.size(); ++k) {
        auto terms = indexTerms(p.leaves[k], p.shape);
        if (p.leaves[k].mask == Leaf::Mask::Index && terms.size() <= 1 && vec4Kind(terms) != Vec4Kind::PerLane &&
            vec4Kind(terms) != Vec4Kind::Uniform) {
            // Four consecutive places from one index (i is a multiple of 4, and so is the length
            // the places wrap at): one division instead of four.
            body += "        const long long v_" + o.leafVar[k] + " = " + indexExpr(terms, "i", n) + ";\n";
            for (int l = 0; l < 4; ++l)
                lanes[k][std::size_t(l)] =
                    maskValue(p.leaves[k], "v_" + o.leafVar[k] + (l ? " + " + std::to_string(l) : std::string()));
            continue;
        }
        if (p.leaves[k].isMask()) {
            for (int l = 0; l < 4; ++l)
                lanes[k][std::size_t(l)] =
                    maskValue(p.leaves[k], indexExpr(terms, l ? "(i + " + std::to_string(l) + ")" : "i", n));
            continue;
        }
        const Leaf &leaf = p.leaves[k];
        const std::string &m = o.memberOf.at(leaf.tensor);
        const std::string local = "v_" + o.leafVar[k];
        // Four int64s would be a 32-byte load: they go lane by lane instead.
        const Vec4Kind kind = longs(leaf) && vec4Kind(terms) != Vec4Kind::Uniform ? Vec4Kind::PerLane : vec4Kind(terms);
        switch (kind) {
        case Vec4Kind::Same:
        case Vec4Kind::Contiguous: {
            std::string idx = indexExpr(terms, "i", n);
            const std::string vec = bytes(leaf) ? "uchar4" : "float4";
            body += "        const " + vec + " " + local + " = " + ld + "(reinterpret_cast<const " + vec + "*>(" + m +
                " + " + (terms.empty() ? idx : "(" + idx + ")") + "));\n";
            for (int l = 0; l < 4; ++l)
                lanes[k][std::size_t(l)] = asFloat(leaf, local + "." + comp[l]);
            break;
        }
        case Vec4Kind::Uniform:
            body += "        const float " + local + " = " +
                asFloat(leaf, ld + "(" + m + " + (" + indexExpr(terms, "i", n) + "))") + ";\n";
            for (auto &lane : lanes[k])
                lane = local;
            break;
        case Vec4Kind::PerLane:
            for (int l = 0; l < 4; ++l)
                lanes[k][std::size_t(l)] = asFloat(
                    leaf,
                    ld + "(" + m + " + (" + indexExpr(terms, l ? "(i + " + std::to_string(l) + ")" : "i", n) + "))");
            break;
        }
    }
    std::string code = "\n    // Elements i .. i + 3, i a multiple of 4.\n";
    code += std::string("    __device__ __forceinline__ float4 at4(long long i") + (acc ? ", float4 acc" : "") +
        ") const\n    {\n" + (p.leaves.empty() ? "        (void)i;\n" : "") + body;
    std::vector<std::string> results;
    for (int l = 0; l < 4; ++l) {
        std::vector<std::string> a;
        for (auto &lane : lanes)
            a.push_back(lane[std::size_t(l)]);
        if (acc)
            a.push_back(std::string("acc.") + comp[l]);
        results.push_back("apply(" + join(a, ", ") + ")");
    }
    return code + "        return make_float4(" + join(results, ",\n                           ") + ");\n    }\n";
}

} // namespace

std::string cudaName(const std::string &tensor)
{
    auto digitsAfter = [&](char c) {
        return tensor.size() > 1 && tensor[0] == c &&
            std::all_of(tensor.begin() + 1, tensor.end(), [](unsigned char d) { return std::isdigit(d); });
    };
    // kName are the templates' constants, tN the program's intermediate values.
    bool bad = reserved().count(tensor) > 0 || tensor.rfind("__", 0) == 0 || tensor.rfind("v_", 0) == 0 ||
        (tensor.size() > 1 && tensor[0] == 'k' && std::isupper(static_cast<unsigned char>(tensor[1]))) ||
        digitsAfter('t');
    return bad ? tensor + "_" : tensor;
}

bool usesAcc(const EwProgram &p)
{
    if (p.result.kind == EwArg::Kind::Acc)
        return true;
    for (const EwStep &s : p.steps)
        for (const EwArg &a : s.args)
            if (a.kind == EwArg::Kind::Acc)
                return true;
    return false;
}

bool readsOnlyInPlace(const EwProgram &p, const std::string &tensor)
{
    bool read = false;
    for (const Leaf &leaf : p.leaves)
        if (leaf.tensor == tensor) {
            if (leaf.isMask() || leaf.dtype != DType::F32 || !indexTerms(leaf, p.shape).empty())
                return false;
            read = true;
        }
    return read;
}

OperandCode emitProgram(const EwProgram &p, const std::string &name, Loads loads, const std::set<std::string> &taken,
                        const std::string &held)
{
    OperandCode c;
    c.text = p.text();
    const std::string ld = loadsOf(p,
                                   loads == Loads::ReadOnly        ? "__ldg"
                                       : loads == Loads::Streaming ? "__ldcs"
                                       : loads == Loads::Kept      ? "ld_kept"
                                                                   : "*");
    const bool acc = usesAcc(p);
    const OperandNames o = operandNames(p, taken);

    std::string code = "// " + name + ": reads " +
        (o.members.empty() ? std::string("no tensor") : join(o.members, ", ")) +
        (p.empty() ? std::string(".\n") : " and computes " + c.text + ".\n");
    if (acc)
        code += "// acc is the value the kernel computed for the element.\n";
    code += "struct " + name + " {\n";
    for (const std::string &t : o.members) {
        const Leaf *first = nullptr;
        for (const Leaf &l : p.leaves)
            if (l.tensor == t && !first)
                first = &l;
        std::string note = shapeText(first->shape);
        if (first->broadcast(p.shape))
            note += ", broadcast over " + shapeText(p.shape);
        const std::string &m = o.memberOf.at(t);
        const std::string type = "const " + elementType(*first) + "* __restrict__ ";
        code += "    " + type + m + "; // " + note + (bytes(*first) ? ", bool" : longs(*first) ? ", int64" : "") + "\n";
        c.params += std::string(c.params.empty() ? "" : ", ") + type + m;
        c.args += std::string(c.args.empty() ? "" : ", ") + m;
        c.launch += std::string(c.launch.empty() ? "" : ", ") + t;
        c.names.insert(m);
    }
    code += applyFunction(p, o, acc) + atFunction(p, o, ld, acc) + at4Function(p, o, ld, acc);
    if (!held.empty() && o.memberOf.count(held))
        code += heldFunctions(p, o, ld, acc, held);
    code += "};\n";
    c.code = code;
    return c;
}

std::string reductionOutType(const Pattern &p)
{
    return p.reduceOp == "argmax" || p.reduceOp == "argmin" ? "long long" : "float";
}

namespace {

// log(sum(exp(x))) as a running maximum m and the sum s of exp(x - m), rescaled when m grows: one
// pass, no overflow, and the sum in double like the other sums. PyTorch's result for a row whose
// maximum is infinite (inf, or -inf for a row of -inf) is that maximum; so is this one's.
std::string logSumExp(const std::string &len, const std::function<std::string(const std::string &)> &finish)
{
    std::string s;
    s += "// Reduction: log(sum(exp(x))) of " + len + " values: a running maximum m and the sum s of\n"
         "// exp(x - m) in double, rescaled when m grows; finished as m + log(s).\n";
    // The pair is the struct's own type, so a kernel with several reductions (renamed each) has
    // no other name to keep apart.
    s += "struct Reduction {\n    struct Acc {\n        float m;\n        double s;\n    };\n    using Out = float;\n";
    s += "    static __device__ __forceinline__ Acc identity() { return {-__int_as_float(0x7f800000), 0.0}; }\n";
    s += "    static __device__ __forceinline__ Acc lift(float v, long long) { return {v, 1.0}; }\n";
    s += "    static __device__ __forceinline__ Acc combine(Acc a, Acc b)\n    {\n";
    s += "        if (b.m > a.m) {\n            const Acc t = a;\n            a = b;\n            b = t;\n        }\n";
    s += "        if (b.s == 0.0)\n            return a; // an empty side (the identity)\n";
    s += "        // Equal maxima (infinite ones too, whose difference is NaN) add unscaled.\n";
    s += "        a.s += b.m == a.m ? b.s : b.s * (double)expf(b.m - a.m);\n";
    s += "        return a;\n    }\n";
    // Four values at a time: one rescale when their maximum passes the running one, then the four
    // terms summed in fp32 (each at most 1) and added in double. A term whose value equals the
    // maximum is 1 (infinite maxima too); a NaN makes its term NaN. __expf (two instructions
    // against expf's dozen) errs by a few ulp on terms near the maximum, more only on terms too small
    // to matter: the sum stays within 1e-6 of itself, and its log within 1e-6.
    s += "    static __device__ __forceinline__ Acc fold4(Acc a, float4 v)\n    {\n";
    s += "        const float m = fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w));\n";
    s += "        if (m > a.m) {\n            a.s *= (double)__expf(a.m - m);\n            a.m = m;\n        }\n";
    s +=
        "        const float t = (v.x == a.m ? 1.0f : __expf(v.x - a.m)) + (v.y == a.m ? 1.0f : __expf(v.y - a.m)) +\n";
    s += "                        (v.z == a.m ? 1.0f : __expf(v.z - a.m)) + (v.w == a.m ? 1.0f : __expf(v.w - a.m));\n";
    s += "        a.s += (double)t;\n        return a;\n    }\n";
    s += "    static __device__ __forceinline__ Acc shfl_xor(Acc a, int mask)\n    {\n";
    s += "        return {__shfl_xor_sync(0xffffffffu, a.m, mask), __shfl_xor_sync(0xffffffffu, a.s, mask)};\n    }\n";
    s += finish("isinf(a.m) ? a.m : float((double)a.m + log(a.s))");
    return s + "};\n";
}

} // namespace

std::string emitReduction(const Pattern &p)
{
    const std::string &op = p.reduceOp;
    const std::string len = std::to_string(p.row.len);
    // Elementwise ops after the reduction (a loss's division by the batch, a norm's root) finish
    // each output; they read no tensors here.
    const std::string after = p.kind != PatternKind::Reduce || p.program.empty()
        ? std::string()
        : emitEpilogue(p.program, {{1, numel(p.program.shape), "i"}}, {}).expr;
    auto finish = [&](const std::string &value) {
        if (after.empty())
            return "    static __device__ __forceinline__ Out finish(Acc a) { return " + value + "; }\n";
        return "    // Then " + p.program.text() +
            ".\n    static __device__ __forceinline__ Out finish(Acc a)\n    {\n" +
            "        const float acc = " + value + ";\n        return " + after + ";\n    }\n";
    };
    // A reduction to one value per output, combined with `combine` (an expression of a and b).
    auto scalar = [&](const std::string &comment, const std::string &acc, const std::string &identity,
                      const std::string &combine, const std::string &value) {
        return comment + "struct Reduction {\n    using Acc = " + acc + ";\n    using Out = float;\n" +
            "    static __device__ __forceinline__ Acc identity() { return " + identity + "; }\n" +
            "    static __device__ __forceinline__ Acc lift(float v, long long) { return v; }\n" +
            "    static __device__ __forceinline__ Acc combine(Acc a, Acc b) { return " + combine + "; }\n" +
            "    // Four consecutive values, in order.\n" +
            "    static __device__ __forceinline__ Acc fold4(Acc a, float4 v)\n    {\n" +
            "        return combine(combine(combine(combine(a, v.x), v.y), v.z), v.w);\n    }\n" +
            "    static __device__ __forceinline__ Acc shfl_xor(Acc a, int mask) { return "
            "__shfl_xor_sync(0xffffffffu, a, mask); }\n" +
            finish(value) + "};\n";
    };
    if (op == "sum" || op == "mean")
        return scalar("// Reduction: " + op + " of " + len + " values, accumulated in double so that the\n" +
                          "// rounding of long fp32 sums stays far below the tolerance.\n",
                      "double", "0.0", "a + b", op == "mean" ? "float(a / " + len + ".0)" : "float(a)");
    if (op == "prod")
        return scalar("// Reduction: the product of " + len + " values, in double: fewer roundings, and no\n" +
                          "// overflow or underflow of partial products that fp32 would meet before the end.\n",
                      "double", "1.0", "a * b", "float(a)");
    if (op == "logsumexp")
        return logSumExp(len, finish);
    const bool isMax = op == "amax" || op == "argmax";
    const std::string cmp = isMax ? ">" : "<";
    const std::string worst = isMax ? "-__int_as_float(0x7f800000)" : "__int_as_float(0x7f800000)"; // -inf / +inf
    if (op == "amax" || op == "amin")
        return scalar("// Reduction: the " + std::string(isMax ? "maximum" : "minimum") + " of " + len + " values.\n",
                      "float", worst, std::string(isMax ? "fmaxf" : "fminf") + "(a, b)", "a");
    std::string s;
    s += "// Reduction: the index of the " + std::string(isMax ? "largest" : "smallest") + " of " + len +
        " values (the first one on a tie,\n// as PyTorch returns); the order of combining does not matter.\n";
    s += "struct ValueIndex {\n    float value;\n    long long index;\n};\n\n";
    s += "struct Reduction {\n";
    s += "    using Acc = ValueIndex;\n    using Out = long long;\n";
    s += "    static __device__ __forceinline__ Acc identity() { return {" + worst + ", 0x7fffffffffffffffLL}; }\n";
    s += "    static __device__ __forceinline__ Acc lift(float v, long long index) { return {v, index}; }\n";
    s += "    static __device__ __forceinline__ Acc combine(Acc a, Acc b)\n    {\n";
    s += "        return (b.value " + cmp + " a.value || (b.value == a.value && b.index < a.index)) ? b : a;\n    }\n";
    s += "    static __device__ __forceinline__ Acc shfl_xor(Acc a, int mask)\n    {\n";
    s += "        return {__shfl_xor_sync(0xffffffffu, a.value, mask), __shfl_xor_sync(0xffffffffu, a.index, mask)};\n "
         "   }\n";
    s += "    static __device__ __forceinline__ Out finish(Acc a) { return a.index; }\n";
    return s + "};\n";
}

namespace {

std::string times(const std::string &expr, std::int64_t k)
{
    return k == 1 ? expr : "(long long)" + expr + " * " + std::to_string(k);
}

// The whole flat index, as a long long expression.
std::string flatIndex(const std::vector<IndexSegment> &segs)
{
    std::vector<std::string> parts;
    for (auto s = segs.rbegin(); s != segs.rend(); ++s)
        if (s->extent > 1)
            parts.push_back(times(s->expr, s->stride));
    if (parts.empty())
        return "0";
    if (parts.size() == 1)
        return parts[0];
    return "(" + join(parts, " + ") + ")";
}

// (flat / div) % mod from the segments: exact when the term spans whole segments or lies inside
// one, else from the flat index.
std::string termIndex(const IndexTerm &t, const std::vector<IndexSegment> &segs, std::int64_t numel)
{
    if (t.stride == 0)
        return "0";
    const std::int64_t end = t.div * t.mod;
    std::string e;
    for (std::size_t i = 0; i < segs.size() && e.empty(); ++i) {
        if (segs[i].stride != t.div)
            continue;
        for (std::size_t j = i; j < segs.size(); ++j) {
            if (segs[j].stride * segs[j].extent != end)
                continue;
            std::vector<std::string> parts;
            for (std::size_t k = j + 1; k-- > i;)
                if (segs[k].extent > 1)
                    parts.push_back(times(segs[k].expr, segs[k].stride / t.div));
            e = parts.empty() ? "0" : parts.size() == 1 ? parts[0] : "(" + join(parts, " + ") + ")";
            break;
        }
    }
    for (std::size_t k = 0; k < segs.size() && e.empty(); ++k) {
        const IndexSegment &s = segs[k];
        if (s.extent <= 1 || t.div < s.stride || t.div % s.stride != 0 || end > s.stride * s.extent)
            continue;
        e = s.expr;
        if (t.div != s.stride)
            e = "(" + e + " / " + std::to_string(t.div / s.stride) + ")";
        if (end != s.stride * s.extent)
            e = "(" + e + " % " + std::to_string(t.mod) + ")";
    }
    if (e.empty()) {
        e = flatIndex(segs);
        if (t.div != 1)
            e = "(" + e + " / " + std::to_string(t.div) + ")";
        if (end != numel)
            e = "(" + e + " % " + std::to_string(t.mod) + ")";
    }
    return t.stride == 1 ? e : times(e, t.stride);
}

} // namespace

std::set<std::string> identifiersOf(const std::string &text)
{
    std::set<std::string> ids;
    std::string code;
    for (std::size_t pos = 0; pos < text.size();) {
        std::size_t nl = text.find('\n', pos);
        if (nl == std::string::npos)
            nl = text.size();
        std::string line = text.substr(pos, nl - pos);
        line = line.substr(0, line.find("//"));
        for (std::size_t open; (open = line.find("{{")) != std::string::npos;) {
            const std::size_t close = line.find("}}", open);
            line.erase(open, close == std::string::npos ? std::string::npos : close + 2 - open);
        }
        code += line + '\n';
        pos = nl + 1;
    }
    for (std::size_t i = 0; i < code.size();) {
        const unsigned char c = static_cast<unsigned char>(code[i]);
        if (std::isalpha(c) || c == '_') {
            std::size_t j = i;
            while (j < code.size() && (std::isalnum(static_cast<unsigned char>(code[j])) || code[j] == '_'))
                ++j;
            ids.insert(code.substr(i, j - i));
            i = j;
        } else if (std::isdigit(c)) {
            while (i < code.size() && (std::isalnum(static_cast<unsigned char>(code[i])) || code[i] == '.'))
                ++i;
        } else {
            ++i;
        }
    }
    return ids;
}

EpilogueCode emitEpilogue(const EwProgram &p, const std::vector<IndexSegment> &index,
                          const std::set<std::string> &taken)
{
    EpilogueCode c;
    c.text = p.text();
    const std::int64_t n = numel(p.shape);
    const std::string ld = loadsOf(p, "__ldg");

    // One kernel parameter per distinct tensor, one load per leaf.
    std::map<std::string, std::string> paramOf;
    std::set<std::string> names = taken;
    names.insert({"acc", "row", "col"});
    for (const Leaf &l : p.leaves) {
        if (l.isMask() || paramOf.count(l.tensor))
            continue;
        std::string name = cudaName(l.tensor);
        while (names.count(name))
            name += "_";
        names.insert(name);
        paramOf[l.tensor] = name;
        c.params += ", const " + elementType(l) + " *__restrict__ " + name;
        c.args += ", " + l.tensor;
    }
    std::vector<std::string> leafVar, loads;
    for (std::size_t k = 0; k < p.leaves.size(); ++k) {
        const Leaf &l = p.leaves[k];
        std::string v = l.isMask() ? std::string("v_mask") : "v_" + paramOf[l.tensor];
        if (std::find(leafVar.begin(), leafVar.end(), v) != leafVar.end())
            v += "_" + std::to_string(k);
        leafVar.push_back(v);
        auto terms = indexTerms(l, p.shape);
        std::string idx = terms.empty() ? flatIndex(index) : std::string();
        std::vector<std::string> parts;
        for (const IndexTerm &t : terms) {
            std::string e = termIndex(t, index, n);
            if (e != "0")
                parts.push_back(e);
        }
        if (!terms.empty())
            idx = parts.empty() ? "0" : join(parts, " + ");
        if (l.isMask())
            loads.push_back(maskValue(l, idx));
        else
            loads.push_back(asFloat(l, ld + "(" + paramOf[l.tensor] + (idx == "0" ? "" : " + " + idx) + ")"));
    }

    // Values used once are written inline; otherwise a lambda called in place computes each once.
    std::vector<int> leafUses(p.leaves.size(), 0), stepUses(p.steps.size(), 0);
    auto count = [&](const EwArg &a) {
        if (a.kind == EwArg::Kind::Leaf)
            ++leafUses[std::size_t(a.index)];
        if (a.kind == EwArg::Kind::Step)
            ++stepUses[std::size_t(a.index)];
    };
    for (const EwStep &s : p.steps)
        for (const EwArg &a : s.args)
            count(a);
    count(p.result);
    const bool inlined = std::all_of(leafUses.begin(), leafUses.end(), [](int u) { return u <= 1; }) &&
        std::all_of(stepUses.begin(), stepUses.end(), [](int u) { return u <= 1; });
    std::function<std::string(const EwArg &, bool)> argExpr = [&](const EwArg &a, bool nested) -> std::string {
        switch (a.kind) {
        case EwArg::Kind::Leaf:
            return inlined ? loads[std::size_t(a.index)] : leafVar[std::size_t(a.index)];
        case EwArg::Kind::Step: {
            if (!inlined)
                return "t" + std::to_string(a.index);
            const EwStep &s = p.steps[std::size_t(a.index)];
            std::vector<std::string> args;
            for (const EwArg &x : s.args)
                args.push_back(argExpr(x, true));
            const std::string e = stepExpression(s, args);
            return nested ? "(" + e + ")" : e;
        }
        case EwArg::Kind::Scalar:
            return floatLiteral(a.value);
        case EwArg::Kind::Acc:
            return "acc";
        }
        return "0.0f";
    };
    if (inlined) {
        c.expr = argExpr(p.result, false);
        return c;
    }
    std::string body;
    for (std::size_t k = 0; k < p.leaves.size(); ++k)
        body += "const float " + leafVar[k] + " = " + loads[k] + "; ";
    for (std::size_t k = 0; k < p.steps.size(); ++k) {
        std::vector<std::string> args;
        for (const EwArg &a : p.steps[k].args)
            args.push_back(argExpr(a, true));
        body += "const float t" + std::to_string(k) + " = " + stepExpression(p.steps[k], args) + "; ";
    }
    c.expr = "[&] { " + body + "return " + argExpr(p.result, false) + "; }()";
    return c;
}

} // namespace kf::builtin
