// The matchers for each pattern kind, run on a resolved graph (pattern_graph.h).
#include "gen/builtin/codegen.h"
#include "gen/builtin/pattern_graph.h"

#include <algorithm>
#include <cmath>

namespace kf::builtin::detail {

namespace {

bool isReduction(const Op &op)
{
    const std::string &n = op.name;
    if (n == "aten::max" || n == "aten::min")
        return op.in.size() > 1 && !op.in[1].tensor;
    return n == "aten::sum" || n == "aten::mean" || n == "aten::prod" || n == "aten::amax" || n == "aten::amin" ||
        n == "aten::argmax" || n == "aten::argmin" || n == "aten::logsumexp";
}

bool isSoftmax(const std::string &n)
{
    return n == "aten::softmax" || n == "aten::log_softmax" || n == "aten::_softmax" || n == "aten::_log_softmax";
}

// Vector norms: a reduction of |x|^p with a root after it.
bool isVectorNorm(const std::string &n)
{
    return n == "aten::norm" || n == "aten::linalg_vector_norm" || n == "aten::frobenius_norm";
}

// Losses of two operands reduced over every element.
bool isLoss(const std::string &n)
{
    return n == "aten::mse_loss" || n == "aten::l1_loss" || n == "aten::smooth_l1_loss" || n == "aten::huber_loss" ||
        n == "aten::kl_div" || n == "aten::soft_margin_loss";
}

bool isScan(const std::string &n) { return n == "aten::cumsum" || n == "aten::cumprod"; }

RowGeometry geometry(const Shape &x, int first, int count, bool keepdim)
{
    RowGeometry g;
    g.dim = first;
    g.dims = count;
    g.keepdim = keepdim;
    for (int i = 0; i < int(x.size()); ++i) {
        auto d = x[std::size_t(i)];
        if (i < first)
            g.outer *= d;
        else if (i < first + count)
            g.len *= d;
        else
            g.inner *= d;
    }
    return g;
}

bool flag(const Operand &o) { return !o.tensor && o.constant.is_boolean() && o.constant.get<bool>(); }

// The result must follow from `values` through alias ops only (a reduction then a view, say).
Status onlyAliasesAfter(const Graph &g, const Op &anchor)
{
    std::string v = g.result();
    while (std::find(anchor.out.begin(), anchor.out.end(), v) == anchor.out.end()) {
        const Op *op = g.producer(v);
        if (!op)
            return makeError(ErrorCode::Unsupported, "the built-in generator could not follow the reference's result");
        if (!isAlias(op->name) || op->name == "aten::t" || op->name == "aten::transpose" || op->name == "aten::permute")
            return unsupportedOp(op->name, "after " + anchor.name);
        v = op->in[0].value;
    }
    return Ok{};
}

// Every op must be the anchor, used by a program, or a view.
Status noneLeft(const Graph &g, const std::set<int> &used)
{
    for (int i = 0; i < int(g.ops().size()); ++i)
        if (!used.count(i) && !isAlias(g.ops()[std::size_t(i)].name))
            return unsupportedOp(g.ops()[std::size_t(i)].name, "in this combination");
    return Ok{};
}

// The reduced dims of a reduction (operand `at`): a list, an int, or None (all dims). They must
// be consecutive.
Result<std::pair<int, int>> reducedDims(const Op &op, const Shape &x, std::size_t at = 1)
{
    auto dims = op.in.size() > at ? intList(op.in[at].constant) : std::nullopt;
    if (!dims || dims->empty())
        return std::pair<int, int>{0, int(std::max<std::size_t>(x.size(), 1))};
    std::vector<int> d;
    for (auto v : *dims)
        d.push_back(normDim(v, x.size()));
    std::sort(d.begin(), d.end());
    for (std::size_t i = 1; i < d.size(); ++i)
        if (d[i] != d[i - 1] + 1)
            return unsupportedOp(op.name, "over dims that are not adjacent");
    return std::pair<int, int>{d.front(), int(d.size())};
}

// The window of max_poolNd(self, kernel, stride, padding, dilation, ceil_mode) or
// avg_poolNd(self, kernel, stride, padding, ceil_mode, count_include_pad[, divisor_override]).
PoolSpec poolSpec(const Graph &g, const Op &op)
{
    const PoolWindow w = poolWindow(op);
    PoolSpec s;
    s.op = op.name;
    s.max = w.max;
    s.dims = w.dims;
    s.ceilMode = w.ceil;
    // The last dim is W, the one before H, a 3-D window's first D.
    for (int i = 0; i < w.dims; ++i) {
        const std::size_t from = std::size_t(i);
        const int slot = i - (w.dims - 2); // -1: D, 0: H, 1: W
        if (slot < 0)
            s.kernelD = w.kernel[from], s.strideD = w.stride[from], s.padD = w.pad[from], s.dilationD = w.dilation[from];
        else
            s.kernel[slot] = w.kernel[from], s.stride[slot] = w.stride[from], s.pad[slot] = w.pad[from],
            s.dilation[slot] = w.dilation[from];
    }
    if (!s.max)
        s.countIncludePad = op.in.size() <= 5 || op.in[5].constant.is_null() || flag(op.in[5]);
    if (!s.max && op.in.size() > 6 && op.in[6].constant.is_number_integer())
        s.divisor = op.in[6].constant.get<std::int64_t>();
    s.outShape = g.shape(op.out[0]);
    return s;
}

// A problem tensor behind `value` (through views), with the number of last-two-dim transposes.
std::optional<std::pair<std::string, bool>> matrixOperand(const Graph &g, const std::string &value)
{
    std::string v = value;
    bool trans = false;
    while (true) {
        const Value &val = g.value(v);
        if (val.kind == Value::Kind::Leaf)
            return std::pair{val.tensor, trans};
        const Op *op = g.producer(v);
        if (!op || !isAlias(op->name) || op->name == "aten::permute")
            return std::nullopt;
        if (isTranspose(*op, g.shape(op->in[0].value).size()))
            trans = !trans;
        v = op->in[0].value;
    }
}

} // namespace

bool isRowOp(const Op &op)
{
    const std::string &n = op.name;
    return isReduction(op) || isSoftmax(n) || isVectorNorm(n) || isLoss(n) || isScan(n) || n == "aten::layer_norm" ||
        n == "aten::rms_norm" || n == "aten::group_norm" || n == "aten::instance_norm" || poolDims(n) > 0 ||
        adaptiveDims(n) > 0;
}

namespace {

// Whether `value` is `target` seen through views that keep the layout (no transposes).
bool viewOf(const Graph &g, const std::string &value, const std::string &target)
{
    std::string v = value;
    while (v != target) {
        const Op *op = g.producer(v);
        if (!op || !isAlias(op->name) || op->name == "aten::t" || op->name == "aten::transpose" ||
            op->name == "aten::permute" || op->name == "aten::numpy_T")
            return false;
        v = op->in[0].value;
    }
    return true;
}

// The reduction of a loss: 1 mean, 2 sum (0, none, keeps every element).
Result<std::string> lossReduction(const Op &op)
{
    const nlohmann::json &r = op.in.size() > 2 ? op.in[2].constant : nlohmann::json();
    if (!r.is_number_integer())
        return unsupportedOp(op.name, "with a computed reduction");
    const auto k = r.get<int>();
    if (k == 1)
        return std::string("mean");
    if (k == 2)
        return std::string("sum");
    return unsupportedOp(op.name, "with reduction='none'");
}

double constantOr(const Op &op, std::size_t k, double fallback)
{
    return k < op.in.size() && op.in[k].constant.is_number() ? op.in[k].constant.get<double>() : fallback;
}

// The elementwise term of a loss, of its two operands, built into `b`.
Result<EwArg> lossTerm(const Op &op, ProgramBuilder &b)
{
    auto x = b.operand(op.in[0].value), y = b.operand(op.in[1].value);
    if (!x)
        return x.error();
    if (!y)
        return y.error();
    const std::string &n = op.name;
    if (n == "aten::kl_div") {
        // PyTorch: target * (log(target) - input), 0 where target is 0; with log_target,
        // exp(target) * (target - input).
        const bool logTarget = op.in.size() > 3 && flag(op.in[3]);
        if (logTarget)
            return b.step("mul", {b.step("exp", {*y}, n), b.step("sub", {*y, *x}, n)}, n);
        return b.step("sub", {b.step("xlogx", {*y}, n), b.step("mul", {*y, *x}, n)}, n);
    }
    if (n == "aten::soft_margin_loss")
        return b.step("log1p", {b.step("exp", {b.step("neg", {b.step("mul", {*x, *y}, n)}, n)}, n)}, n);
    const EwArg d = b.step("sub", {*x, *y}, n);
    if (n == "aten::mse_loss")
        return b.step("square", {d}, n);
    const EwArg a = b.step("abs", {d}, n);
    if (n == "aten::l1_loss")
        return a;
    const double beta = constantOr(op, 3, 1.0);
    if (n == "aten::smooth_l1_loss")
        return beta == 0 ? a : b.step("smooth_l1", {a, EwArg::scalar(beta)}, n);
    return b.step("huber", {a, EwArg::scalar(beta)}, n); // huber_loss, delta
}

// A vector norm's order: 1, 2 or infinity; the step before the reduction, the reduction and the
// root after it.
struct NormOrder {
    std::string before, reduce, after;
};

Result<NormOrder> normOrder(const Op &op)
{
    if (op.name == "aten::frobenius_norm")
        return NormOrder{"square", "sum", "sqrt"};
    const nlohmann::json &p = op.in.size() > 1 ? op.in[1].constant : nlohmann::json();
    double order = 2;
    if (p.is_number())
        order = p.get<double>();
    else if (p.is_string() && p.get<std::string>() != "fro")
        return unsupportedOp(op.name, "of order " + p.get<std::string>());
    else if (!p.is_null() && !p.is_string())
        return unsupportedOp(op.name, "with a computed order");
    if (order == 2)
        return NormOrder{"square", "sum", "sqrt"};
    if (order == 1)
        return NormOrder{"abs", "sum", ""};
    if (std::isinf(order) && order > 0)
        return NormOrder{"abs", "amax", ""};
    return unsupportedOp(op.name, "of order " + std::to_string(order));
}

// The affine tensors of a norm op: problem tensors of `channels` elements.
Result<std::string> affineLeaf(const Graph &g, const Op &op, std::size_t k, std::int64_t channels)
{
    if (k >= op.in.size() || !op.in[k].tensor)
        return std::string();
    const Value &v = g.value(op.in[k].value);
    if (v.kind != Value::Kind::Leaf || numel(v.shape) != channels)
        return unsupportedOp(op.name, "with a computed weight or bias");
    return v.tensor;
}

// A row op's match so far: the pattern, the ops it accounts for, the value its epilogue starts
// from, and a norm's root (applied to the reduction before anything reads it).
struct RowMatch {
    Pattern p;
    std::set<int> used;
    std::string result;
    std::string accWrap;
};

// The prologue: what the row op reads, as a program of problem tensors.
Result<EwProgram> rowInput(const Op &op, const std::string &in, ProgramBuilder &b)
{
    const std::string &n = op.name;
    if (isLoss(n)) {
        auto term = lossTerm(op, b);
        if (!term)
            return term.error();
        return b.finish(*term);
    }
    if (isVectorNorm(n)) {
        auto order = normOrder(op);
        if (!order)
            return order.error();
        auto v = b.operand(in);
        if (!v)
            return v.error();
        return b.finish(b.step(order->before, {*v}, n));
    }
    return b.build(in);
}

Status softmaxRows(const Op &op, const Shape &x, Pattern &p)
{
    const std::string &n = op.name;
    auto dim = intList(op.in.size() > 1 ? op.in[1].constant : nlohmann::json());
    if (!dim)
        return unsupportedOp(n, "with a computed dim");
    if (op.in.size() > 2 && !op.in[2].constant.is_null() && !op.in[2].constant.is_boolean())
        return unsupportedOp(n, "with a dtype conversion");
    p.kind = PatternKind::Softmax;
    p.logSoftmax = n.find("log_softmax") != std::string::npos;
    p.row = geometry(x, normDim((*dim)[0], x.size()), 1, true);
    return Ok{};
}

Status layerNormRows(const Graph &g, const Op &op, const Shape &x, Pattern &p)
{
    const std::string &n = op.name;
    auto shape = intList(op.in.size() > 1 ? op.in[1].constant : nlohmann::json());
    if (!shape || shape->empty() || shape->size() > x.size())
        return unsupportedOp(n, "with a computed normalized shape");
    p.kind = PatternKind::LayerNorm;
    p.row = geometry(x, int(x.size() - shape->size()), int(shape->size()), true);
    for (std::size_t k : {std::size_t(2), std::size_t(3)}) {
        auto leaf = affineLeaf(g, op, k, p.row.len);
        if (!leaf)
            return leaf.error();
        (k == 2 ? p.weight : p.bias) = *leaf;
    }
    if (op.in.size() < 5 || !op.in[4].constant.is_number())
        return unsupportedOp(n, "with a computed eps");
    p.eps = op.in[4].constant.get<double>();
    return Ok{};
}

Status rmsNormRows(const Graph &g, const Op &op, const Shape &x, Pattern &p)
{
    const std::string &n = op.name;
    auto shape = intList(op.in.size() > 1 ? op.in[1].constant : nlohmann::json());
    if (!shape || shape->empty() || shape->size() > x.size())
        return unsupportedOp(n, "with a computed normalized shape");
    p.kind = PatternKind::RMSNorm;
    p.row = geometry(x, int(x.size() - shape->size()), int(shape->size()), true);
    auto leaf = affineLeaf(g, op, 2, p.row.len);
    if (!leaf)
        return leaf.error();
    p.weight = *leaf;
    // No eps: PyTorch uses the float32 machine epsilon.
    p.eps =
        op.in.size() > 3 && op.in[3].constant.is_number() ? op.in[3].constant.get<double>() : 1.1920928955078125e-07;
    return Ok{};
}

// Statistics over each (sample, group of channels): rows of C / groups * H * W contiguous elements;
// the per-channel weight and bias follow as an epilogue.
Status groupNormRows(const Graph &g, const Op &op, const Shape &x, Pattern &p)
{
    const std::string &n = op.name;
    if (x.size() < 2)
        return unsupportedOp(n, "of a tensor of rank " + std::to_string(x.size()));
    const bool group = n == "aten::group_norm";
    const std::int64_t channels = x[1];
    std::int64_t groups = channels;
    if (group) {
        if (op.in.size() < 5 || !op.in[1].constant.is_number_integer())
            return unsupportedOp(n, "with computed groups");
        groups = op.in[1].constant.get<std::int64_t>();
        if (groups < 1 || channels % groups != 0)
            return unsupportedOp(n, "with channels not divisible by groups");
    } else if (op.in.size() < 8 || !flag(op.in[5])) {
        return unsupportedOp(n, "with running statistics");
    }
    const std::size_t epsAt = group ? 4 : 7;
    if (op.in.size() <= epsAt || !op.in[epsAt].constant.is_number())
        return unsupportedOp(n, "with a computed eps");
    p.eps = op.in[epsAt].constant.get<double>();
    for (std::size_t k : {std::size_t(group ? 2 : 1), std::size_t(group ? 3 : 2)}) {
        auto leaf = affineLeaf(g, op, k, channels);
        if (!leaf)
            return leaf.error();
        (k == std::size_t(group ? 2 : 1) ? p.weight : p.bias) = *leaf;
    }
    p.kind = PatternKind::LayerNorm;
    p.groups = groups;
    p.row = geometry(x, 1, int(x.size()) - 1, true);
    p.row.outer = x[0] * groups;
    p.row.len = numel(x) / p.row.outer;
    return Ok{};
}

// Adaptive average pooling: to one value per plane it is the mean over the pooled dims (keepdim);
// to sizes that divide the input's it is average pooling with a window and stride of the ratio
// (PyTorch's windows, floor(i * in / out) to ceil((i + 1) * in / out), are exactly those then).
Status adaptiveRows(const Graph &g, const Op &op, const Shape &x, Pattern &p)
{
    const int dims = adaptiveDims(op.name);
    if (x.size() < std::size_t(dims) + 1)
        return unsupportedOp(op.name, "of a tensor of rank " + std::to_string(x.size()));
    const std::vector<std::int64_t> out = adaptiveSizes(op, x);
    const std::size_t first = x.size() - std::size_t(dims);
    if (std::all_of(out.begin(), out.end(), [](std::int64_t o) { return o == 1; })) {
        p.kind = PatternKind::Reduce;
        p.reduceOp = "mean";
        p.row = geometry(x, int(first), dims, true);
        return Ok{};
    }
    PoolSpec s;
    s.op = op.name;
    s.max = false;
    s.dims = dims;
    for (int i = 0; i < dims; ++i) {
        const std::int64_t in = x[first + std::size_t(i)], o = out[std::size_t(i)];
        if (o < 1 || in % o != 0)
            return unsupportedOp(op.name, "to a size that does not divide the input's (" + std::to_string(in) +
                                              " to " + std::to_string(o) + ")");
        const int slot = i - (dims - 2); // -1: D, 0: H, 1: W
        if (slot < 0)
            s.kernelD = s.strideD = in / o;
        else
            s.kernel[slot] = s.stride[slot] = in / o;
    }
    s.outShape = g.shape(op.out[0]);
    p.kind = PatternKind::Pool;
    p.pool = s;
    p.row = geometry(x, int(first), dims, false);
    return Ok{};
}

// sum, mean, amax, argmax, max along a dim ...: the reduced dims, and whether the values or the
// indices are the result.
Status reductionRows(const Graph &g, const Op &op, const Shape &x, RowMatch &m)
{
    const std::string &n = op.name;
    Pattern &p = m.p;
    // prod(self, dtype) over every element, or prod(self, dim, keepdim, dtype).
    if (n == "aten::prod") {
        const std::size_t dtypeAt = op.in.size() == 2 ? 1 : 3;
        if (op.in.size() > dtypeAt && !op.in[dtypeAt].constant.is_null())
            return unsupportedOp(n, "with a dtype conversion");
    }
    auto dims = reducedDims(op, x);
    if (!dims)
        return dims.error();
    bool arg = n == "aten::argmax" || n == "aten::argmin";
    bool keep = op.in.size() > 2 && flag(op.in[2]);
    p.row = geometry(x, dims->first, dims->second, keep);
    if (n == "aten::max" || n == "aten::min") {
        bool indices = g.result() != op.out[0] && g.throughAliases(g.result()) == op.out[1];
        p.reduceOp = std::string(indices ? "arg" : "a") + (n == "aten::max" ? "max" : "min");
        if (indices)
            m.result = op.out[1];
        arg = indices;
    } else {
        p.reduceOp = n.substr(6);
    }
    if ((n == "aten::sum" || n == "aten::mean") && op.in.size() > 3 && !op.in[3].constant.is_null())
        return unsupportedOp(n, "with a dtype conversion");
    DType want = arg ? DType::I64 : DType::F32;
    if (g.problem().outputs[0].dtype != want)
        return unsupportedOp(n, "returning " + toString(g.problem().outputs[0].dtype));
    return Ok{};
}

// Reductions, vector norms and losses: all a Reduce pattern.
Status reducePatternRows(const Graph &g, const Op &op, const Shape &x, RowMatch &m)
{
    const std::string &n = op.name;
    Pattern &p = m.p;
    p.kind = PatternKind::Reduce;
    if (isLoss(n)) {
        auto r = lossReduction(op);
        if (!r)
            return r.error();
        p.reduceOp = *r;
        p.row = geometry(x, 0, int(std::max<std::size_t>(x.size(), 1)), false);
        return Ok{};
    }
    if (!isVectorNorm(n))
        return reductionRows(g, op, x, m);
    const bool fro = n == "aten::frobenius_norm";
    auto dims = reducedDims(op, x, fro ? 1 : 2);
    if (!dims)
        return dims.error();
    const std::size_t keepAt = fro ? 2 : 3;
    if (!fro && op.in.size() > 4 && !op.in[4].constant.is_null())
        return unsupportedOp(n, "with a dtype conversion");
    p.row = geometry(x, dims->first, dims->second, op.in.size() > keepAt && flag(op.in[keepAt]));
    auto order = normOrder(op);
    p.reduceOp = order->reduce;
    m.accWrap = order->after;
    return Ok{};
}

Status scanRows(const Graph &g, const Op &op, const Shape &x, const Op *flipIn, RowMatch &m)
{
    const std::string &n = op.name;
    Pattern &p = m.p;
    auto dim = intList(op.in.size() > 1 ? op.in[1].constant : nlohmann::json());
    if (!dim)
        return unsupportedOp(n, "with a computed dim");
    if (op.in.size() > 2 && !op.in[2].constant.is_null())
        return unsupportedOp(n, "with a dtype conversion");
    p.kind = PatternKind::Scan;
    p.reduceOp = n == "aten::cumsum" ? "sum" : "prod";
    p.row = geometry(x, normDim((*dim)[0], x.size()), 1, true);
    if (!flipIn)
        return Ok{};
    // flip(cumsum(flip(x))) along the scanned dim: both flips, of that dim alone.
    auto flipDims = [&](const Op &f) {
        auto d = intList(f.in.size() > 1 ? f.in[1].constant : nlohmann::json());
        return d && d->size() == 1 && normDim((*d)[0], x.size()) == p.row.dim;
    };
    auto after = g.consumers(op.out[0]);
    const Op *flipOut = after.size() == 1 ? &g.ops()[std::size_t(after[0])] : nullptr;
    if (!flipDims(*flipIn) || !flipOut || flipOut->name != "aten::flip" || !flipDims(*flipOut))
        return unsupportedOp("aten::flip", "around " + n + " other than of the scanned dim on both sides");
    m.used.insert(after[0]);
    m.result = flipOut->out[0];
    p.reverse = true;
    return Ok{};
}

// The kind of row op and its geometry.
Status matchRowKind(const Graph &g, const Op &op, const Shape &x, const Op *flipIn, RowMatch &m)
{
    const std::string &n = op.name;
    if (isSoftmax(n))
        return softmaxRows(op, x, m.p);
    if (n == "aten::layer_norm")
        return layerNormRows(g, op, x, m.p);
    if (n == "aten::rms_norm")
        return rmsNormRows(g, op, x, m.p);
    if (n == "aten::group_norm" || n == "aten::instance_norm")
        return groupNormRows(g, op, x, m.p);
    if (isReduction(op) || isVectorNorm(n) || isLoss(n))
        return reducePatternRows(g, op, x, m);
    if (const int dims = poolDims(n)) {
        if (x.size() < std::size_t(dims) + 1)
            return unsupportedOp(n, "of a tensor of rank " + std::to_string(x.size()));
        m.p.kind = PatternKind::Pool;
        m.p.pool = poolSpec(g, op);
        m.p.row = geometry(x, int(x.size()) - dims, dims, false);
        return Ok{};
    }
    if (adaptiveDims(n))
        return adaptiveRows(g, op, x, m.p);
    if (isScan(n))
        return scanRows(g, op, x, flipIn, m);
    return unsupportedOp(n);
}

// Every view of a reduction's result that broadcasts over `x` as if the reduced dims were kept
// (keepdim, or unsqueezed back): the accumulators of a Normalize epilogue.
std::map<std::string, int> keptViews(const Graph &g, const Shape &x, const RowGeometry &row, const std::string &result)
{
    Shape keep = x;
    for (int d = row.dim; d < row.dim + row.dims && d < int(keep.size()); ++d)
        keep[std::size_t(d)] = 1;
    auto broadcastsAsKept = [&](const Shape &s) {
        if (s.size() > keep.size())
            return false;
        Shape padded(keep.size() - s.size(), 1);
        padded.insert(padded.end(), s.begin(), s.end());
        return padded == keep;
    };
    std::map<std::string, int> accs;
    std::vector<std::string> todo{result};
    while (!todo.empty()) {
        const std::string v = todo.back();
        todo.pop_back();
        if (broadcastsAsKept(g.shape(v)))
            accs[v] = 0;
        for (int c : g.consumers(v))
            if (isAlias(g.ops()[std::size_t(c)].name))
                todo.push_back(g.ops()[std::size_t(c)].out[0]);
    }
    return accs;
}

// What follows the row op: views of its result, or an elementwise epilogue. After a reduction,
// the epilogue is over the reduced values, or over the input's shape with each row's value
// broadcast back (x / sum(|x|, dim, keepdim)): the Normalize pattern.
Status matchRowEpilogue(const Graph &g, const Op &op, const Shape &x, RowMatch &m)
{
    const std::string &n = op.name;
    Pattern &p = m.p;
    const Shape &outShape = g.shape(m.result);
    std::map<std::string, int> accs{{m.result, 0}};
    Shape programShape = outShape;
    const bool arg = p.reduceOp == "argmax" || p.reduceOp == "argmin";
    if (viewOf(g, g.result(), m.result)) {
        p.program = identityProgram(outShape);
        if (!m.accWrap.empty()) {
            ProgramBuilder eb(g, outShape, accs);
            eb.wrapAccs(m.accWrap);
            auto prog = eb.build(m.result);
            if (!prog)
                return prog.error();
            p.program = *prog;
        }
        return Ok{};
    }
    if (arg)
        return unsupportedOp(n, "followed by elementwise ops");
    const std::int64_t resultNumel = numel(g.shape(g.result()));
    if (p.kind == PatternKind::Reduce && resultNumel == numel(x) && resultNumel != numel(outShape)) {
        accs = keptViews(g, x, p.row, m.result);
        p.kind = PatternKind::Normalize;
        programShape = x;
    } else if (resultNumel != numel(outShape)) {
        return unsupportedOp(n, "followed by ops that change the shape of its result");
    }
    ProgramBuilder eb(g, programShape, accs);
    if (!m.accWrap.empty())
        eb.wrapAccs(m.accWrap);
    auto prog = eb.build(g.result());
    if (!prog)
        return prog.error();
    p.program = *prog;
    m.used.insert(eb.used().begin(), eb.used().end());
    // A reduction's templates finish each output with ops on its value alone; one that reads
    // another tensor (a bias added to a row's minimum) makes the rest a stage of its own.
    if (p.kind == PatternKind::Reduce && !p.program.leaves.empty())
        return unsupportedOp(n, "followed by elementwise ops that read other tensors (" + p.program.text() + ")");
    if (p.kind == PatternKind::Normalize && !usesAcc(p.program))
        return unsupportedOp(n, "whose result is not used");
    return Ok{};
}

} // namespace

Result<Pattern> matchRows(const Graph &g, int anchor)
{
    const Op &op = g.ops()[std::size_t(anchor)];
    RowMatch m;
    m.p.anchor = op.name;
    m.used = {anchor};
    std::string in = op.in[0].value;

    // A scan between two flips of its dim runs from the end of the dim.
    const Op *flipIn = nullptr;
    if (isScan(op.name))
        if (const Op *f = g.producer(in); f && f->name == "aten::flip") {
            flipIn = f;
            m.used.insert(g.producerIndex(in));
            in = f->in[0].value;
        }
    const Shape &x = g.shape(in);

    ProgramBuilder b(g, x);
    auto input = rowInput(op, in, b);
    if (!input)
        return input.error();
    m.p.input = *input;
    m.used.insert(b.used().begin(), b.used().end());

    m.result = op.out[0];
    if (auto st = matchRowKind(g, op, x, flipIn, m); !st)
        return st.error();
    if (auto st = matchRowEpilogue(g, op, x, m); !st)
        return st.error();
    if (auto st = noneLeft(g, m.used); !st)
        return st.error();
    return m.p;
}

Result<GemmSpec> gemmSpecOf(const Graph &g, int index)
{
    const Op &op = g.ops()[std::size_t(index)];
    GemmSpec s;
    s.op = op.name;
    bool shifted = op.name == "aten::addmm" || op.name == "aten::baddbmm";
    auto a = matrixOperand(g, op.in[shifted ? 1 : 0].value), b = matrixOperand(g, op.in[shifted ? 2 : 1].value);
    if (!a || !b)
        return unsupportedOp(op.name, "of computed operands");
    s.a = a->first, s.transA = a->second, s.b = b->first, s.transB = b->second;
    if (op.name == "aten::linear")
        s.transB = !s.transB; // weight is [N, K]
    std::size_t biasAt = shifted ? 0 : op.name == "aten::linear" ? 2 : 99;
    if (biasAt < op.in.size() && op.in[biasAt].tensor) {
        const Value &v = g.value(op.in[biasAt].value);
        if (v.kind != Value::Kind::Leaf)
            return unsupportedOp(op.name, "with a computed bias");
        s.bias = v.tensor;
    }
    if (shifted && op.in.size() > 4) {
        if (op.in[3].constant.is_number())
            s.beta = op.in[3].constant.get<double>();
        if (op.in[4].constant.is_number())
            s.alpha = op.in[4].constant.get<double>();
    }
    const Shape &out = g.shape(op.out[0]);
    const Shape &as = g.shape(op.in[shifted ? 1 : 0].value);
    if (out.size() < 2 || as.empty())
        return unsupportedOp(op.name, "of vectors");
    s.batch.assign(out.begin(), out.end() - 2);
    s.m = out[out.size() - 2], s.n = out.back(), s.k = as.back();
    if (op.name == "aten::linear")
        s.batch.clear(), s.m = numel(out) / s.n;
    return s;
}

Result<Pattern> matchMatmul(const Graph &g, int gemm)
{
    Pattern p;
    p.kind = PatternKind::Matmul;
    auto spec = gemmSpecOf(g, gemm);
    if (!spec)
        return spec.error();
    const Op &op = g.ops()[std::size_t(gemm)];
    p.gemms.push_back(*spec);
    p.anchor = op.name;
    ProgramBuilder b(g, g.shape(g.result()), {{op.out[0], 0}});
    auto prog = b.build(g.result());
    if (!prog)
        return prog.error();
    p.program = *prog;
    std::set<int> used = b.used();
    used.insert(gemm);
    if (auto st = noneLeft(g, used); !st)
        return st.error();
    return p;
}

Result<Pattern> matchConv(const Graph &g, const std::vector<int> &anchors)
{
    const Op &op = g.ops()[std::size_t(anchors.front())];
    if (!isConvOp(op.name))
        return unsupportedOp(op.name);
    Pattern p;
    p.kind = PatternKind::Conv;
    p.anchor = op.name;
    auto leafOf = [&](std::size_t k) -> std::string {
        if (k >= op.in.size() || !op.in[k].tensor)
            return {};
        const Value &v = g.value(op.in[k].value);
        return v.kind == Value::Kind::Leaf ? v.tensor : "?";
    };
    const std::string x = leafOf(0), weight = leafOf(1), bias = leafOf(2);
    if (x.empty() || x == "?" || weight.empty() || weight == "?" || bias == "?")
        return unsupportedOp(op.name, "of computed operands");
    auto c = convGeometry(op, g.shape(op.in[0].value), g.shape(op.in[1].value));
    if (!c)
        return c.error();
    c->x = x, c->weight = weight, c->bias = bias;
    p.conv = *c;

    std::set<int> used{anchors.front()};
    std::string epilogueEnd = g.result();
    if (anchors.size() == 2) {
        const Op &pool = g.ops()[std::size_t(anchors[1])];
        if (pool.name != "aten::max_pool2d" && pool.name != "aten::avg_pool2d")
            return unsupportedOp(pool.name, "after " + op.name);
        if (auto st = onlyAliasesAfter(g, pool); !st)
            return st.error();
        p.pool = poolSpec(g, pool);
        used.insert(anchors[1]);
        epilogueEnd = pool.in[0].value;
    } else if (anchors.size() > 2) {
        return unsupportedOp(g.ops()[std::size_t(anchors[2])].name, "after " + op.name);
    }
    ProgramBuilder b(g, g.shape(epilogueEnd), {{op.out[0], 0}});
    auto prog = b.build(epilogueEnd);
    if (!prog)
        return prog.error();
    p.program = *prog;
    used.insert(b.used().begin(), b.used().end());
    if (auto st = noneLeft(g, used); !st)
        return st.error();
    return p;
}

// RMSNorm written out: x * rsqrt(mean(x * x, -1, keepdim) + eps) [* weight], or
// x / sqrt(mean(x^2, -1, keepdim) + eps) [* weight]. Nothing when the graph has no such mean.
std::optional<Result<Pattern>> matchRmsNorm(const Graph &g)
{
    const auto &ops = g.ops();
    auto soleConsumer = [&](const std::string &v) -> const Op * {
        auto c = g.consumers(v);
        return c.size() == 1 ? &ops[std::size_t(c[0])] : nullptr;
    };
    auto other = [](const Op &op, const std::string &v) -> const Operand * {
        if (op.in.size() < 2)
            return nullptr;
        if (op.in[0].value == v)
            return &op.in[1];
        if (op.in[1].value == v)
            return &op.in[0];
        return nullptr;
    };
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const Op &mean = ops[i];
        if (mean.name != "aten::mean" || mean.in.size() < 3 || !flag(mean.in[2]))
            continue;
        const Shape &x = g.shape(mean.in[0].value);
        auto dims = reducedDims(mean, x);
        if (!dims || dims->first != int(x.size()) - 1 || dims->second != 1)
            continue;
        const Op *sq = g.producer(mean.in[0].value);
        if (!sq)
            continue;
        std::string base;
        if (sq->name == "aten::mul" && sq->in.size() == 2 && sq->in[0].tensor && sq->in[0].value == sq->in[1].value)
            base = sq->in[0].value;
        else if ((sq->name == "aten::pow" && sq->in.size() == 2 && sq->in[1].constant == 2) ||
                 sq->name == "aten::square")
            base = sq->in[0].value;
        if (base.empty())
            continue;

        const Op *add = soleConsumer(mean.out[0]);
        if (!add || add->name != "aten::add" || add->in.size() < 2 || add->in[1].tensor ||
            !add->in[1].constant.is_number())
            continue;
        if (add->in.size() > 2 && add->in[2].constant.is_number() && add->in[2].constant.get<double>() != 1.0)
            continue;
        const Op *root = soleConsumer(add->out[0]);
        if (!root || (root->name != "aten::rsqrt" && root->name != "aten::sqrt"))
            continue;
        const bool divide = root->name == "aten::sqrt";
        const Op *norm = soleConsumer(root->out[0]);
        if (!norm || norm->name != (divide ? "aten::div" : "aten::mul"))
            continue;
        const Operand *xo = other(*norm, root->out[0]);
        if (!xo || xo->value != base || (divide && norm->in[1].value != root->out[0]))
            continue;

        Pattern p;
        p.kind = PatternKind::RMSNorm;
        p.anchor = "aten::mean";
        // Nothing follows the norm but its weight (checked below): the output step starts from
        // the normalized value. A default program would return 0 for every element.
        p.program = identityProgram(x);
        p.eps = add->in[1].constant.get<double>();
        p.row = geometry(x, int(x.size()) - 1, 1, true);
        std::set<int> used;
        for (const Op *o : {&mean, sq, add, root, norm})
            used.insert(int(o - ops.data()));
        std::string end = norm->out[0];
        if (const Op *w = soleConsumer(end); w && w->name == "aten::mul") {
            const Operand *wo = other(*w, end);
            const Value &wv = wo && wo->tensor ? g.value(wo->value) : Value{};
            if (wv.kind == Value::Kind::Leaf && numel(wv.shape) == x.back() && wv.shape.back() == x.back()) {
                p.weight = wv.tensor;
                used.insert(int(w - ops.data()));
                end = w->out[0];
            }
        }
        if (g.throughAliases(g.result()) != end)
            continue;
        ProgramBuilder b(g, x);
        auto input = b.build(base);
        if (!input)
            return Result<Pattern>(input.error());
        p.input = *input;
        used.insert(b.used().begin(), b.used().end());
        if (auto st = noneLeft(g, used); !st)
            return Result<Pattern>(st.error());
        return Result<Pattern>(p);
    }
    return std::nullopt;
}

} // namespace kf::builtin::detail
