#pragma once
// The op patterns the built-in generator recognises in a reference's op graph: elementwise chains,
// reductions along one dim or to a scalar (losses included), softmax / log_softmax, LayerNorm,
// RMSNorm, GroupNorm and InstanceNorm, elementwise ops around a reduction (x / sum(|x|), L2 norm,
// RMSNorm written out over any dim), 1-, 2- and 3-D pooling, cumulative sums and products, matrix products
// and Conv2D with their epilogues (and a pooling after the convolution). Tensors are named as the
// problem names them; sizes come from the problem's tensor specs, so the generated kernels can
// bake them in.
#include "domain/op_graph.h"
#include "problem/problem.h"
#include "util/error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kf::builtin {

enum class PatternKind { Elementwise, Reduce, Softmax, LayerNorm, RMSNorm, Matmul, Conv, Pool, Normalize, Scan };
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
    // A leaf no tensor holds, computed from the element's place: torch.triu's (Upper) or tril's
    // (Lower) mask over a matrix of `shape` ([rows, columns], broadcast like a tensor): 1 where the
    // element's column minus its row is at least (Upper) or at most (Lower) `diagonal`, else 0;
    // or torch.arange's values (Index): the element's position in the 1-D `shape`. `tensor` says
    // so in words.
    enum class Mask { None, Upper, Lower, Index };
    Mask mask = Mask::None;
    std::int64_t diagonal = 0;
    // F32; Bool (a mask tensor: 1 where true, as x * mask promotes it); or I64 (class indices,
    // read as the float they equal: exact below 2^24, as PyTorch's promotion to float32 rounds).
    DType dtype = DType::F32;

    bool broadcast(const Shape &programShape) const;
    bool isMask() const { return mask != Mask::None; }
    bool operator==(const Leaf &) const = default;
};
// The mask leaf of torch.triu (upper) or tril over the last two dims of `shape`.
Leaf triangleMask(bool upper, std::int64_t diagonal, const Shape &shape);
// The leaf of torch.arange(n): 0, 1, ..., n - 1.
Leaf positions(std::int64_t n);

// One term of a broadcast leaf's index: ((i / div) % mod) * stride, i the flat output index.
struct IndexTerm {
    std::int64_t div = 1, mod = 1, stride = 1;
};
// The terms for a leaf; empty when the leaf has the program's shape (its index is i).
std::vector<IndexTerm> indexTerms(const Leaf &, const Shape &programShape);

struct EwArg {
    enum class Kind { Leaf, Step, Scalar, Acc };
    Kind kind = Kind::Scalar;
    int index = 0;    // leaf, step or accumulator (matrix product) index
    double value = 0; // scalar
    static EwArg leaf(int i) { return {Kind::Leaf, i, 0}; }
    static EwArg step(int i) { return {Kind::Step, i, 0}; }
    static EwArg scalar(double v) { return {Kind::Scalar, 0, v}; }
    static EwArg acc(int i) { return {Kind::Acc, i, 0}; }
};

struct EwStep {
    std::string fn; // a function of the elementwise table (ew_ops.h): "relu", "add", ...
    std::vector<EwArg> args;
    std::string op; // the aten op it came from
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
    int dim = -1; // first reduced / normalized dim (non-negative)
    int dims = 1; // how many consecutive dims are reduced
    bool keepdim = false;
    std::int64_t outer = 1, len = 1, inner = 1;
};

struct GemmSpec {
    std::string op;   // "aten::addmm"
    std::string a, b; // problem tensors
    bool transA = false, transB = false;
    Shape batch; // leading batch dims of the result
    std::int64_t m = 0, n = 0, k = 0;
    std::string bias; // addmm / linear bias, "" when none
    double alpha = 1, beta = 1;
};

// A 1-, 2- or 3-D pooling window. The (H, W) arrays hold a 2-D window, a 3-D one's last two dims,
// and a 1-D one in W (H is then a window of 1); the D fields hold a 3-D window's first dim.
struct PoolSpec {
    std::string op; // "aten::max_pool2d"
    bool max = true;
    int dims = 2;
    std::int64_t kernel[2]{1, 1}, stride[2]{1, 1}, pad[2]{0, 0}, dilation[2]{1, 1};
    std::int64_t kernelD = 1, strideD = 1, padD = 0, dilationD = 1;
    bool ceilMode = false, countIncludePad = true;
    std::int64_t divisor = 0; // avg_pool2d's divisor_override, 0 when none
    Shape outShape;
};

// A convolution of 1, 2 or 3 spatial dims, or its transpose. Per-dim values run outermost first
// (D, H, W; a 2-D convolution's are H, W; a 1-D one's the length); dims past `dims` stay at 1/0.
struct ConvSpec {
    std::string op = "aten::conv2d"; // as written: "aten::conv_transpose3d", "aten::_convolution", ...
    std::string x, weight, bias;
    int dims = 2;
    bool transposed = false;
    std::int64_t stride[3]{1, 1, 1}, pad[3]{0, 0, 0}, dilation[3]{1, 1, 1}, outputPad[3]{0, 0, 0}, groups = 1;
    Shape outShape; // before any pooling
};

struct Pattern {
    PatternKind kind = PatternKind::Elementwise;
    std::string anchor;           // the op that decides the kind ("aten::softmax"); "" for elementwise
    std::vector<std::string> ops; // every tensor op of the graph, in order
    std::string output = "out";
    DType outDtype = DType::F32;
    Shape outShape;

    // Reduce, Softmax, LayerNorm, RMSNorm, Pool, Normalize, Scan: what the row op reads, computed
    // from leaves by an elementwise prologue (x + residual, (a - b)^2 of a loss) or a single leaf.
    EwProgram input;
    RowGeometry row;
    std::string reduceOp; // Reduce, Normalize: "sum", "mean", "amax", "amin", "argmax", "argmin";
        // Scan: "sum", "prod"
    bool logSoftmax = false;
    bool reverse = false;     // Scan: from the end of the dim (a flip around the scan)
    std::string weight, bias; // LayerNorm / RMSNorm affine tensors ("" when absent)
    double eps = 0;
    std::int64_t groups = 0; // GroupNorm / InstanceNorm (as LayerNorm): groups of channels per row

    // Elementwise: the whole computation. Matmul / Conv: the epilogue, Acc(i) = product i.
    // Reduce, LayerNorm, RMSNorm, Pool, Scan: the epilogue over the row op's output, Acc(0) = its
    // result (LayerNorm / RMSNorm: after the affine weight and bias, which the program applies).
    // Normalize: the output over the input's shape, Acc(0) = the reduction of the element's row.
    EwProgram program;
    std::vector<GemmSpec> gemms;
    std::optional<ConvSpec> conv;
    std::optional<PoolSpec> pool;
    // Matmul or Conv whose products feed more than one elementwise epilogue (a softmax, a sum
    // or a norm after the product, several products combined, a group norm after a convolution):
    // `stages[i]`, a pattern of its own, writes product i whole to the scratch buffer
    // `products[i]` (a gemm's bias included; a convolution's epilogue and pooling too), and `tail`
    // computes the result from them, recognised over the graph with each product as an input
    // tensor of `tailProblem`. Writing and reading the product back costs two passes over it in
    // memory, a few percent of a product that is compute-bound.
    std::vector<std::string> products;
    std::vector<std::shared_ptr<const Pattern>> stages;
    std::shared_ptr<const Pattern> tail;
    bool feedsTail = false; // a stage: its product goes on to a tail, which can amplify its error
    std::shared_ptr<const Problem> tailProblem;

    // "softmax over dim 1 of x [4096, 65536]": one line for comments and idea texts.
    std::string summary() const;
    // "max_pool3d 2x2x2 stride 2": the pooling in words.
    std::string poolText() const;
};

// A reduction along the last dim whose accumulator folds one element at a time (sum, mean,
// amax, amin, logsumexp), nothing after it reading a tensor: the kind of row op that can share
// its pass over the rows with others of the same rows (the norms and the dot product of a cosine
// similarity, the logsumexp and the picked score of a cross entropy).
bool foldsAlongRows(const Pattern &);
// Two row ops over the same rows: same input shape, same [outer, len, inner].
bool sameRows(const Pattern &, const Pattern &);

// `outer` applied to the result of `inner` (its Acc(0)), as one program over their common shape.
EwProgram compose(const EwProgram &inner, const EwProgram &outer);
// The identity epilogue over `shape`: its result is Acc(0).
EwProgram identityProgram(const Shape &shape);

// Recognises the pattern of a reference from its op graph. Graph inputs are matched to the
// problem's inputs and parameters by name; shapes follow from the problem's tensor specs. An op the
// generator cannot implement gives an error (code "unsupported") that names it.
Result<Pattern> recognise(const std::vector<OpNode> &graph, const Problem &problem);

} // namespace kf::builtin
