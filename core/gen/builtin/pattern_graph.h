#pragma once
// Internal to the recogniser: the op graph with its values resolved (problem tensors, constants,
// op results with shapes), and the building of elementwise programs from it.
#include "gen/builtin/ew_ops.h"
#include "gen/builtin/pattern.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace kf::builtin::detail {

// A value of the graph: a problem tensor, the result of a tensor op, or something else (an int
// from aten::size, a list, None).
struct Value {
    enum class Kind { Leaf, Tensor, Other };
    Kind kind = Kind::Other;
    std::string tensor; // Leaf: the problem tensor
    Shape shape;        // Leaf and Tensor: the logical shape (a view of a leaf keeps the leaf)
    int op = -1;        // Tensor: the producing op (index into Graph::ops)
};

struct Operand {
    bool tensor = false;
    std::string value;       // the value name ("%x.1")
    nlohmann::json constant; // when not a tensor (null for None)
};

struct Op {
    std::string name; // "aten::softmax"
    std::vector<Operand> in;
    std::vector<std::string> out;
    std::vector<Shape> graphShapes; // output shapes as the worker reported them
};

// Ops that only reinterpret their input (no arithmetic).
bool isAlias(const std::string &op);
// Ops that transpose the last two dims of a matrix operand.
bool isTranspose(const Op &op, std::size_t rank);
// torch.arange(end) of a known end: a tensor of the element's places, made from no tensor.
bool isPositions(const Op &op);

class Graph {
public:
    Graph(const std::vector<OpNode> &nodes, const Problem &problem);
    Status status() const { return m_status; }

    const Problem &problem() const { return m_problem; }
    const std::vector<Op> &ops() const { return m_ops; }
    const Value &value(const std::string &name) const;
    const Shape &shape(const std::string &name) const { return value(name).shape; }
    // The op that produces `name`, or nullptr for leaves and constants.
    const Op *producer(const std::string &name) const;
    int producerIndex(const std::string &name) const;
    // The ops that read `name` as a tensor.
    std::vector<int> consumers(const std::string &name) const;
    // The value the forward returns.
    const std::string &result() const { return m_result; }
    // Follows alias ops back to the value they view.
    std::string throughAliases(const std::string &name) const;

private:
    Status build(const std::vector<OpNode> &nodes);
    Result<Shape> inferShape(const Op &op) const;
    std::string matchTensor(const std::string &valueName) const;

    const Problem &m_problem;
    std::vector<Op> m_ops;
    std::map<std::string, Value> m_values;
    std::string m_result;
    Status m_status = Ok{};
};

// Builds an elementwise program whose result is `value`, over the leaves it reads. Values in
// `accs` become Acc(i) (the matrix product or convolution before its epilogue); every op reached
// must be elementwise, an alias, or an inference-mode batch_norm. `programShape` is the shape the
// program is indexed by.
class ProgramBuilder {
public:
    ProgramBuilder(const Graph &g, Shape programShape, std::map<std::string, int> accs = {});
    Result<EwProgram> build(const std::string &value);
    // Every op the program used, so the matcher can tell which ops are left over.
    const std::set<int> &used() const { return m_used; }

    // Pieces for programs that a matcher completes itself (a loss of two operands): the argument
    // holding `value`, a step appended by hand, and the program with `result`.
    Result<EwArg> operand(const std::string &value) { return visit(value); }
    EwArg step(const std::string &fn, std::vector<EwArg> args, const std::string &op);
    Result<EwProgram> finish(EwArg result);
    // Every read of an accumulator goes through `fn` first (a norm's sqrt of its sum of squares).
    void wrapAccs(const std::string &fn) { m_accWrap = fn; }

private:
    Result<EwArg> visit(const std::string &value);
    Result<EwArg> leaf(const std::string &tensor, const Shape &view);
    Result<EwArg> batchNorm(const Op &op, int index);
    Result<EwArg> triangle(const Op &op);
    EwArg computedLeaf(const Leaf &l);

    const Graph &m_graph;
    EwProgram m_program;
    std::map<std::string, int> m_accs;
    std::map<std::string, EwArg> m_memo;
    std::set<int> m_used;
    bool m_reshaped = false; // an intermediate value was reshaped: broadcast leaves would be wrong
    std::string m_accWrap;
    std::map<int, EwArg> m_wrapped;
};

Error unsupportedOp(const std::string &op, const std::string &why = {});
// Output size along one dim of a convolution or pooling window (ceil: a pooling's ceil_mode).
std::int64_t windowOut(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t p, std::int64_t d, bool ceil);
int normDim(std::int64_t dim, std::size_t rank);
std::optional<std::vector<std::int64_t>> intList(const nlohmann::json &);

// conv1d/2d/3d, conv_transpose1d/2d/3d, convolution and _convolution.
bool isConvOp(const std::string &op);
// Such an op's geometry from its constant arguments and its operands' shapes (x: the input, w: the
// weight); names of the operands are left to the caller.
Result<ConvSpec> convGeometry(const Op &op, const Shape &x, const Shape &w);

// max_pool1d/2d/3d and avg_pool1d/2d/3d, and how many dims their window has (0: not a pooling).
int poolDims(const std::string &op);
// A pooling op's window, per pooled dim outermost first (one number in the op stands for every
// dim; no stride means a stride of the kernel).
struct PoolWindow {
    int dims = 0;
    bool max = false, ceil = false;
    std::vector<std::int64_t> kernel, stride, pad, dilation;
};
PoolWindow poolWindow(const Op &op);
// adaptive_avg_pool1d/2d/3d: how many dims it pools (0: not one).
int adaptiveDims(const std::string &op);
// The output sizes an adaptive pooling asks for over the last dims of `x` (None keeps a size).
std::vector<std::int64_t> adaptiveSizes(const Op &op, const Shape &x);
// The row ops: reductions (losses and norms too), softmax, norms, pooling, scans.
bool isRowOp(const Op &op);

// The graph with its composite ops (cosine_similarity, pairwise_distance, triplet_margin_loss, an
// einsum that is a matrix product, a product with diag(v)) written as ops the matchers take
// (pattern_expand.cpp); other nodes unchanged.
std::vector<OpNode> expandComposites(const std::vector<OpNode> &nodes, const Problem &problem);
// "%x.1" -> "x": the problem tensor a graph value names (TorchScript adds a version suffix).
std::string tensorOfValue(const std::string &valueName);

// The per-kind matchers (pattern_kinds.cpp); each is tried on the whole graph.
Result<Pattern> matchRows(const Graph &, int anchor);
// One matrix product with its elementwise epilogue.
Result<Pattern> matchMatmul(const Graph &, int gemm);
// Matrix products whose results go on to more than an elementwise epilogue (pattern.h, `tail`).
Result<Pattern> matchProducts(const Graph &, const std::vector<OpNode> &nodes, const std::vector<int> &gemms);
// A convolution (with its epilogue and pooling) whose result goes on to more than that.
Result<Pattern> matchConvProducts(const Graph &, const std::vector<OpNode> &nodes, int conv);
// Several row ops in a chain, or one followed by what its own epilogue cannot do (an elementwise
// op that reads another tensor after a reduction): the first (with the elementwise ops after it)
// written to a scratch buffer, the rest recognised as a problem of its own over it.
Result<Pattern> matchRowStages(const Graph &, const std::vector<OpNode> &nodes, const std::vector<int> &rows);
// The product of a matmul, mm, bmm, addmm, baddbmm or linear op of leaf operands.
Result<GemmSpec> gemmSpecOf(const Graph &, int gemm);
Result<Pattern> matchConv(const Graph &, const std::vector<int> &anchors);
std::optional<Result<Pattern>> matchRmsNorm(const Graph &);

} // namespace kf::builtin::detail
