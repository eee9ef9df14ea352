#pragma once
// The op patterns the built-in generator recognises in a reference's op graph: elementwise chains,
// reductions along one dim, softmax / log_softmax, LayerNorm, RMSNorm, matrix products and Conv2D
// with their epilogues (and a pooling after the convolution), and pooling alone (recognised, not yet
// implemented by the catalogue). Tensors are named as the problem names them; sizes come from the
// problem's tensor specs, so the generated kernels can bake them in.
#include "eval/protocol.h"
#include "problem/problem.h"
#include "util/error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kf::builtin {

enum class PatternKind { Elementwise, Reduce, Softmax, LayerNorm, RMSNorm, Matmul, Conv2d, Pool };
std::string toString(PatternKind);

using Shape = std::vector<std::int64_t>;
std::int64_t numel(const Shape &);
std::string shapeText(const Shape &); // "[4096, 65536]"

// A problem tensor read by an elementwise program. `view` is its shape as the program sees it,
// right-aligned against the program's shape (numpy broadcasting); size-1 dims are broadcast.
struct Leaf {
    std::string tensor;
    Shape shape; // the problem's shape of the tensor
    Shape view;  // same numel as `shape`, 1s inserted where it is broadcast
    bool broadcast(const Shape &programShape) const;
};

// One term of a broadcast leaf's index: ((i / div) % mod) * stride, i the flat output index.
struct IndexTerm {
    std::int64_t div = 1, mod = 1, stride = 1;
};
// The terms for a leaf; empty when the leaf has the program's shape (its index is i).
std::vector<IndexTerm> indexTerms(const Leaf &, const Shape &programShape);

struct EwArg {
    enum class Kind { Leaf, Step, Scalar, Acc };
    Kind kind = Kind::Scalar;
    int index = 0;     // leaf, step or accumulator (matrix product) index
    double value = 0;  // scalar
    static EwArg leaf(int i) { return {Kind::Leaf, i, 0}; }
    static EwArg step(int i) { return {Kind::Step, i, 0}; }
    static EwArg scalar(double v) { return {Kind::Scalar, 0, v}; }
    static EwArg acc(int i) { return {Kind::Acc, i, 0}; }
};

struct EwStep {
    std::string fn;          // a function of the elementwise table (ew_ops.h): "relu", "add", ...
    std::vector<EwArg> args;
    std::string op;          // the aten op it came from
};

// A fused elementwise computation over leaves, in SSA form: step k may use leaves, scalars and
// earlier steps. The result is the last step, or a leaf when there are no steps.
struct EwProgram {
    std::vector<Leaf> leaves;
    std::vector<EwStep> steps;
    EwArg result;
    Shape shape;
    bool empty() const { return steps.empty(); }
    // "relu(x + bias)": the computation in words, for comments and idea texts.
    std::string text() const;
};

// Geometry of a row operation: the tensor seen as [outer, len, inner] around the reduced dims.
struct RowGeometry {
    int dim = -1;       // first reduced / normalized dim (non-negative)
    int dims = 1;       // how many consecutive dims are reduced
    bool keepdim = false;
    std::int64_t outer = 1, len = 1, inner = 1;
};

struct GemmSpec {
    std::string op;        // "aten::addmm"
    std::string a, b;      // problem tensors
    bool transA = false, transB = false;
    Shape batch;           // leading batch dims of the result
    std::int64_t m = 0, n = 0, k = 0;
    std::string bias;      // addmm / linear bias, "" when none
    double alpha = 1, beta = 1;
};

struct PoolSpec {
    std::string op;        // "aten::max_pool2d"
    bool max = true;
    std::int64_t kernel[2]{1, 1}, stride[2]{1, 1}, pad[2]{0, 0}, dilation[2]{1, 1};
    bool ceilMode = false, countIncludePad = true;
    Shape outShape;
};

struct ConvSpec {
    std::string x, weight, bias;
    std::int64_t stride[2]{1, 1}, pad[2]{0, 0}, dilation[2]{1, 1}, groups = 1;
    Shape outShape;        // before any pooling
};

struct Pattern {
    PatternKind kind = PatternKind::Elementwise;
    std::string anchor;             // the op that decides the kind ("aten::softmax"); "" for elementwise
    std::vector<std::string> ops;   // every tensor op of the graph, in order
    std::string output = "out";
    DType outDtype = DType::F32;
    Shape outShape;

    // Reduce, Softmax, LayerNorm, RMSNorm, Pool: what the row op reads, computed from leaves by an
    // elementwise prologue (x + residual) or a single leaf.
    EwProgram input;
    RowGeometry row;
    std::string reduceOp;           // "sum", "mean", "amax", "amin", "argmax", "argmin"
    bool logSoftmax = false;
    std::string weight, bias;       // LayerNorm / RMSNorm affine tensors ("" when absent)
    double eps = 0;

    // Elementwise: the whole computation. Matmul / Conv2d: the epilogue, Acc(i) = product i.
    EwProgram program;
    std::vector<GemmSpec> gemms;
    std::optional<ConvSpec> conv;
    std::optional<PoolSpec> pool;
    std::string rowOpAfter;         // Matmul followed by a softmax: "aten::softmax"

    // "softmax over dim 1 of x [4096, 65536]": one line for comments and idea texts.
    std::string summary() const;
};

// Recognises the pattern of a reference from its op graph. Graph inputs are matched to the
// problem's inputs and parameters by name; shapes follow from the problem's tensor specs. An op the
// generator cannot implement gives an error (code "unsupported") that names it.
Result<Pattern> recognise(const std::vector<OpNode> &graph, const Problem &problem);

} // namespace kf::builtin
