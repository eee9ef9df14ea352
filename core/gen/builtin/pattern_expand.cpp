// Composite aten ops written as the ops the recogniser takes: cosine similarity and pairwise
// distances as norms and sums of the rows, the triplet margin loss from two such distances, cross
// entropy as a logsumexp and a picking sum of the rows, a
// product with a diagonal matrix as a broadcast product, the einsum equations that are matrix
// products, and broadcast_tensors of problem tensors as expands. The reference keeps the composite op; only the generator sees the expansion.
#include "gen/builtin/pattern_graph.h"

#include <algorithm>
#include <map>

namespace kf::builtin::detail {

namespace {

using json = nlohmann::json;

// One operand of an emitted op: a value of the graph, or a constant.
struct Arg {
    std::string value;
    json constant;
    static Arg of(const std::string &v) { return {v, json()}; }
    static Arg number(double c) { return {{}, c}; }
    static Arg integer(std::int64_t c) { return {{}, c}; }
    static Arg list(std::vector<std::int64_t> c) { return {{}, json(c)}; }
    static Arg flag(bool c) { return {{}, c}; }
    static Arg none() { return {{}, json()}; }
};

class Emitter {
public:
    explicit Emitter(std::vector<OpNode> &out) : m_out(out) {}

    // Appends `op(args)`; its result is named `name`, or a fresh name none of the problem's
    // tensors can have ('~' is not in an identifier).
    std::string op(const std::string &op, const std::vector<Arg> &args, const Shape &shape = {},
                   const std::string &name = {})
    {
        OpNode n;
        n.op = op;
        for (const Arg &a : args) {
            n.inputs.push_back(a.value.empty() ? "%kf~c" + std::to_string(m_next++) : a.value);
            n.constants.push_back(a.value.empty() ? a.constant : json());
            n.inputShapes.emplace_back();
        }
        n.outputs = {name.empty() ? "%kf~v" + std::to_string(m_next++) : name};
        n.outputShapes = {shape};
        m_out.push_back(std::move(n));
        return m_out.back().outputs[0];
    }

private:
    std::vector<OpNode> &m_out;
    int m_next = 0;
};

double numberAt(const OpNode &n, std::size_t i, double otherwise)
{
    return i < n.constants.size() && n.constants[i].is_number() ? n.constants[i].get<double>() : otherwise;
}

Shape shapeAt(const OpNode &n, std::size_t i)
{
    return i < n.inputShapes.size() ? Shape(n.inputShapes[i].begin(), n.inputShapes[i].end()) : Shape{};
}

Shape outShape(const OpNode &n) { return n.outputShapes.empty() ? Shape{} : Shape(n.outputShapes[0]); }

// Two operands that may differ in shape (broadcast): the expansions below assume they do not.
bool sameShapes(const OpNode &n, std::size_t a, std::size_t b)
{
    const Shape x = shapeAt(n, a), y = shapeAt(n, b);
    return x.empty() || y.empty() || x == y;
}

// cosine_similarity(x1, x2, dim, eps) = sum(x1 * x2, dim) / (max(|x1|, eps) * max(|x2|, eps)), the
// norms taken along dim: what PyTorch computes, up to rounding. Shapes are left to the recogniser
// (a graph the worker did not run has none), so dims stay as given, negative ones too.
bool cosineSimilarity(const OpNode &n, Emitter &e)
{
    if (n.inputs.size() < 4 || !sameShapes(n, 0, 1) || !n.constants[2].is_number_integer())
        return false;
    const std::int64_t dim = n.constants[2].get<std::int64_t>();
    const double eps = numberAt(n, 3, 1e-8);
    auto norm = [&](const std::string &v) {
        const std::string l2 = e.op("aten::linalg_vector_norm",
                                    {Arg::of(v), Arg::integer(2), Arg::list({dim}), Arg::flag(false), Arg::none()});
        return e.op("aten::clamp_min", {Arg::of(l2), Arg::number(eps)});
    };
    const std::string n1 = norm(n.inputs[0]), n2 = norm(n.inputs[1]);
    const std::string dot = e.op("aten::mul", {Arg::of(n.inputs[0]), Arg::of(n.inputs[1])});
    const std::string sum = e.op("aten::sum", {Arg::of(dot), Arg::list({dim}), Arg::flag(false), Arg::none()});
    const std::string both = e.op("aten::mul", {Arg::of(n1), Arg::of(n2)});
    e.op("aten::div", {Arg::of(sum), Arg::of(both)}, outShape(n), n.outputs[0]);
    return true;
}

// |x1 - x2 + eps|_p along the last dim (pairwise_distance).
std::string distance(Emitter &e, const std::string &x1, const std::string &x2, double p, double eps, bool keepdim,
                     const Shape &shape = {}, const std::string &name = {})
{
    const std::string diff = e.op("aten::sub", {Arg::of(x1), Arg::of(x2), Arg::integer(1)});
    const std::string shifted = e.op("aten::add", {Arg::of(diff), Arg::number(eps), Arg::integer(1)});
    return e.op("aten::linalg_vector_norm",
                {Arg::of(shifted), Arg::number(p), Arg::list({-1}), Arg::flag(keepdim), Arg::none()}, shape, name);
}

// pairwise_distance(x1, x2, p, eps, keepdim)
bool pairwiseDistance(const OpNode &n, Emitter &e)
{
    if (n.inputs.size() < 5 || !sameShapes(n, 0, 1))
        return false;
    const bool keep = n.constants[4].is_boolean() && n.constants[4].get<bool>();
    distance(e, n.inputs[0], n.inputs[1], numberAt(n, 2, 2), numberAt(n, 3, 1e-6), keep, outShape(n), n.outputs[0]);
    return true;
}

// triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction):
// max(d(a, p) - d(a, n) + margin, 0), with d(a, n) the smaller of d(a, n) and d(p, n) when swap.
bool tripletMarginLoss(const OpNode &n, Emitter &e)
{
    if (n.inputs.size() < 8 || !sameShapes(n, 0, 1) || !sameShapes(n, 0, 2) || !n.constants[7].is_number_integer())
        return false;
    const double margin = numberAt(n, 3, 1), p = numberAt(n, 4, 2), eps = numberAt(n, 5, 1e-6);
    const bool swap = n.constants[6].is_boolean() && n.constants[6].get<bool>();
    const int reduction = n.constants[7].get<int>(); // 0 none, 1 mean, 2 sum
    if (reduction < 0 || reduction > 2)
        return false;
    const std::string pos = distance(e, n.inputs[0], n.inputs[1], p, eps, false);
    std::string neg = distance(e, n.inputs[0], n.inputs[2], p, eps, false);
    if (swap)
        neg = e.op("aten::minimum", {Arg::of(neg), Arg::of(distance(e, n.inputs[1], n.inputs[2], p, eps, false))});
    const std::string gap = e.op("aten::sub", {Arg::of(pos), Arg::of(neg), Arg::integer(1)});
    const std::string shifted = e.op("aten::add", {Arg::of(gap), Arg::number(margin), Arg::integer(1)});
    if (reduction == 0) {
        e.op("aten::clamp_min", {Arg::of(shifted), Arg::number(0)}, outShape(n), n.outputs[0]);
        return true;
    }
    const std::string hinge = e.op("aten::clamp_min", {Arg::of(shifted), Arg::number(0)});
    e.op(reduction == 1 ? "aten::mean" : "aten::sum", {Arg::of(hinge), Arg::none()}, Shape{}, n.outputs[0]);
    return true;
}

// An einsum of two operands that is one matrix product: a single index summed, the others kept in
// order: "bijl,lk->bijk" (B a matrix), "bij,bjk->bik" and the same with either operand's last two
// indices swapped (a transposed view, which the product templates read).
bool einsumProduct(const OpNode &n, const std::vector<OpNode> &nodes, Emitter &e)
{
    if (n.constants.empty() || !n.constants[0].is_string() || n.inputs.size() < 2)
        return false;
    const OpNode *list = nullptr;
    for (const OpNode &l : nodes)
        if (l.op == "prim::ListConstruct" && !l.outputs.empty() && l.outputs[0] == n.inputs[1])
            list = &l;
    if (!list || list->inputs.size() != 2)
        return false;
    std::string eq = n.constants[0].get<std::string>();
    eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
    const auto arrow = eq.find("->"), comma = eq.find(',');
    if (arrow == std::string::npos || comma == std::string::npos || comma > arrow || eq.find('.') != std::string::npos)
        return false;
    std::string a = eq.substr(0, comma), b = eq.substr(comma + 1, arrow - comma - 1), o = eq.substr(arrow + 2);
    auto distinct = [](std::string s) {
        std::sort(s.begin(), s.end());
        return std::adjacent_find(s.begin(), s.end()) == s.end();
    };
    if (a.size() < 2 || b.size() < 2 || !distinct(a) || !distinct(b) || !distinct(o))
        return false;
    std::string summed;
    for (char c : a)
        if (b.find(c) != std::string::npos && o.find(c) == std::string::npos)
            summed += c;
    if (summed.size() != 1)
        return false;
    const char k = summed[0];
    // k in an operand's second-last place: a transposed view of it.
    const bool transA = a.back() != k && a[a.size() - 2] == k;
    const bool transB = b.size() == 2 ? b[0] != k : b.back() == k;
    if (transA)
        std::swap(a[a.size() - 1], a[a.size() - 2]);
    if (transB)
        std::swap(b[b.size() - 1], b[b.size() - 2]);
    bool product;
    if (b.size() == 2) {
        // [rows..., k] @ [k, n]: any number of leading dims on A.
        product = a.back() == k && b[0] == k && o == a.substr(0, a.size() - 1) + b[1];
    } else {
        // Batched: the same leading indices, then [i, k] @ [k, j].
        const std::string batch = a.substr(0, a.size() - 2);
        product = a.size() == b.size() && a.back() == k && b[b.size() - 2] == k && b.substr(0, b.size() - 2) == batch &&
            o == batch + a[a.size() - 2] + b.back();
    }
    if (!product)
        return false;
    auto view = [&](const std::string &v, bool transposed) {
        return transposed ? e.op("aten::transpose", {Arg::of(v), Arg::integer(-2), Arg::integer(-1)}) : v;
    };
    const std::string A = view(list->inputs[0], transA), B = view(list->inputs[1], transB);
    e.op("aten::matmul", {Arg::of(A), Arg::of(B)}, outShape(n), n.outputs[0]);
    return true;
}

// The rank of a node's first operand: as the worker recorded it, or the problem tensor's.
std::size_t rankOf(const OpNode &n, const Problem &problem)
{
    if (!shapeAt(n, 0).empty())
        return shapeAt(n, 0).size();
    const TensorSpec *t = problem.tensor(tensorOfValue(n.inputs[0]));
    return t ? t->shape.size() : 0;
}

bool isMatrixProduct(const std::string &op) { return op == "aten::matmul" || op == "aten::mm"; }

// The diag(v) whose only reader is a matrix product that has it as one operand, the other not a
// diag: diag's value -> v. diag(v) @ B scales B's rows by v, B @ diag(v) its columns, exactly
// (every other term of the sum is a zero).
std::map<std::string, std::string> diagonals(const std::vector<OpNode> &nodes, const Problem &problem)
{
    std::map<std::string, int> reads;
    for (const OpNode &n : nodes)
        for (const std::string &v : n.inputs)
            ++reads[v];
    std::map<std::string, std::string> diag;
    for (const OpNode &n : nodes)
        if (n.op == "aten::diag" && !n.inputs.empty() && !n.outputs.empty() && rankOf(n, problem) == 1 &&
            numberAt(n, 1, 0) == 0 && reads[n.outputs[0]] == 1)
            diag[n.outputs[0]] = n.inputs[0];
    std::map<std::string, std::string> scaled;
    for (const OpNode &m : nodes)
        if (isMatrixProduct(m.op) && m.inputs.size() >= 2 && diag.count(m.inputs[0]) != diag.count(m.inputs[1])) {
            const std::string &d = diag.count(m.inputs[0]) ? m.inputs[0] : m.inputs[1];
            scaled[d] = diag[d];
        }
    return scaled;
}

// torch.broadcast_tensors of problem tensors, unpacked (F.mse_loss, F.l1_loss, F.smooth_l1_loss
// and F.huber_loss begin with it): each value of the unpack -> the tensor and the shape it is
// broadcast to, read off the problem's tensors; the broadcast's list value -> nothing.
std::map<std::string, std::pair<std::string, Shape>> broadcastLists(const std::vector<OpNode> &nodes,
                                                                    const Problem &problem)
{
    auto producer = [&](const std::string &value, const char *op) -> const OpNode * {
        for (const OpNode &n : nodes)
            if (n.op == op && n.outputs.size() == 1 && n.outputs[0] == value)
                return &n;
        return nullptr;
    };
    std::map<std::string, std::pair<std::string, Shape>> out;
    for (const OpNode &unpack : nodes) {
        if (unpack.op != "prim::ListUnpack" || unpack.inputs.size() != 1)
            continue;
        const OpNode *b = producer(unpack.inputs[0], "aten::broadcast_tensors");
        const OpNode *list = b && b->inputs.size() == 1 ? producer(b->inputs[0], "prim::ListConstruct") : nullptr;
        const auto readers = std::count_if(nodes.begin(), nodes.end(), [&](const OpNode &n) {
            return std::find(n.inputs.begin(), n.inputs.end(), unpack.inputs[0]) != n.inputs.end();
        });
        if (!list || list->inputs.size() != unpack.outputs.size() || readers != 1)
            continue;
        Shape shape;
        bool known = true;
        for (const std::string &v : list->inputs) {
            const TensorSpec *t = problem.tensor(tensorOfValue(v));
            if (!t) {
                known = false;
                break;
            }
            // numpy broadcasting, right-aligned; a size-1 dim takes the other's size.
            Shape s = t->shape;
            if (s.size() > shape.size())
                shape.insert(shape.begin(), s.size() - shape.size(), 1);
            s.insert(s.begin(), shape.size() - s.size(), 1);
            for (std::size_t d = 0; d < s.size(); ++d) {
                if (shape[d] == 1)
                    shape[d] = s[d];
                else if (s[d] != 1 && s[d] != shape[d])
                    known = false;
            }
        }
        if (!known)
            continue;
        for (std::size_t k = 0; k < unpack.outputs.size(); ++k)
            out[unpack.outputs[k]] = {list->inputs[k], shape};
        out[unpack.inputs[0]] = {}; // the broadcast's own value, which only the unpack reads
    }
    return out;
}

// The node that makes `value`, or null (a graph input).
const OpNode *producerOf(const std::vector<OpNode> &nodes, const std::string &value)
{
    for (const OpNode &n : nodes)
        if (std::find(n.outputs.begin(), n.outputs.end(), value) != n.outputs.end())
            return &n;
    return nullptr;
}

// The shape of `value` before the recogniser works shapes out: a problem tensor's; an elementwise
// op's, the broadcast of its tensor operands' (scores divided by a temperature); else as recorded.
// Empty when not known (a module's graph that the worker lowered without running it has none).
Shape knownShape(const std::vector<OpNode> &nodes, const Problem &problem, const std::string &value, int depth = 0)
{
    if (const TensorSpec *t = problem.tensor(tensorOfValue(value)))
        return t->shape;
    const OpNode *n = producerOf(nodes, value);
    if (!n || depth > 64)
        return {};
    if (!isElementwiseOp(n->op))
        return outShape(*n);
    Shape out;
    for (std::size_t k = 0; k < n->inputs.size(); ++k) {
        if (k < n->constants.size() && !n->constants[k].is_null())
            continue; // a number
        const OpNode *from = producerOf(nodes, n->inputs[k]);
        if (from && from->op == "prim::Constant")
            continue; // None
        Shape s = knownShape(nodes, problem, n->inputs[k], depth + 1);
        if (s.empty())
            return outShape(*n);
        // numpy broadcasting, right-aligned.
        if (s.size() > out.size())
            out.insert(out.begin(), s.size() - out.size(), 1);
        for (std::size_t d = 0; d < s.size(); ++d) {
            std::int64_t &o = out[out.size() - s.size() + d];
            if (o == 1)
                o = s[d];
            else if (s[d] != 1 && s[d] != o)
                return {};
        }
    }
    return out;
}

// cross_entropy_loss(x, target, weight, reduction, ignore_index, label_smoothing) over scores x
// [N, C] and class indices target [N] (an int64 problem tensor), without weights or smoothing:
// per row, logsumexp(x) minus the target's score, which a sum of the row picks out where the
// column's position equals the target (every other term is a zero). Rows whose target is
// ignore_index count 0 and, under the mean, are left out of the count, as PyTorch's nll_loss does.
// The positions are compared as floats: exact while C is below 2^24.
bool crossEntropy(const OpNode &n, const std::vector<OpNode> &nodes, const Problem &problem, Emitter &e)
{
    if (n.inputs.size() != 6 || n.constants.size() != 6 || n.outputs.size() != 1)
        return false;
    const TensorSpec *target = problem.tensor(tensorOfValue(n.inputs[1]));
    const OpNode *weight = producerOf(nodes, n.inputs[2]);
    const Shape x = knownShape(nodes, problem, n.inputs[0]);
    if (!target || x.size() != 2 || target->shape.size() != 1 || target->dtype != DType::I64 ||
        target->shape[0] != x[0] || x[1] >= (std::int64_t(1) << 24))
        return false;
    if (problem.tensor(tensorOfValue(n.inputs[2])) || (weight && weight->op != "prim::Constant"))
        return false; // class weights
    if (!n.constants[3].is_number_integer() || !n.constants[4].is_number_integer() || numberAt(n, 5, 0) != 0)
        return false;
    const int reduction = n.constants[3].get<int>(); // 0 none, 1 mean, 2 sum
    const std::int64_t ignored = n.constants[4].get<std::int64_t>();
    if (reduction < 0 || reduction > 2)
        return false;
    const std::int64_t classes = x[1];
    const std::string lse = e.op("aten::logsumexp", {Arg::of(n.inputs[0]), Arg::list({1}), Arg::flag(false)});
    const std::string places =
        e.op("aten::arange", {Arg::integer(classes), Arg::none(), Arg::none(), Arg::none(), Arg::none()});
    const std::string column = e.op("aten::unsqueeze", {Arg::of(n.inputs[1]), Arg::integer(1)});
    const std::string hit = e.op("aten::eq", {Arg::of(places), Arg::of(column)});
    const std::string scores = e.op("aten::mul", {Arg::of(n.inputs[0]), Arg::of(hit)});
    const std::string picked = e.op("aten::sum", {Arg::of(scores), Arg::list({1}), Arg::flag(false), Arg::none()});
    const std::string loss = e.op("aten::sub", {Arg::of(lse), Arg::of(picked), Arg::integer(1)});
    const std::string kept = e.op("aten::ne", {Arg::of(n.inputs[1]), Arg::integer(ignored)});
    const Shape out = reduction == 0 ? Shape{x[0]} : Shape{};
    if (reduction == 0) {
        e.op("aten::mul", {Arg::of(loss), Arg::of(kept)}, out, n.outputs[0]);
        return true;
    }
    const std::string counted = e.op("aten::mul", {Arg::of(loss), Arg::of(kept)});
    if (reduction == 2) {
        e.op("aten::sum", {Arg::of(counted), Arg::none(), Arg::flag(false), Arg::none()}, out, n.outputs[0]);
        return true;
    }
    const std::string total = e.op("aten::sum", {Arg::of(counted), Arg::none(), Arg::flag(false), Arg::none()});
    const std::string count = e.op("aten::sum", {Arg::of(kept), Arg::none(), Arg::flag(false), Arg::none()});
    e.op("aten::div", {Arg::of(total), Arg::of(count)}, out, n.outputs[0]);
    return true;
}

} // namespace

std::vector<OpNode> expandComposites(const std::vector<OpNode> &nodes, const Problem &problem)
{
    const std::map<std::string, std::string> diagonal = diagonals(nodes, problem);
    const auto broadcast = broadcastLists(nodes, problem);
    std::vector<OpNode> out;
    Emitter e(out);
    for (const OpNode &n : nodes) {
        bool done = false;
        if (n.op == "prim::ListUnpack" && !n.outputs.empty() && broadcast.count(n.outputs[0])) {
            // Each tensor expanded to the common shape, as the ops after it would broadcast it.
            for (const std::string &v : n.outputs) {
                const auto &[tensor, shape] = broadcast.at(v);
                e.op("aten::expand", {Arg::of(tensor), Arg::list(shape), Arg::flag(false)}, shape, v);
            }
            done = true;
        } else if (n.op == "aten::broadcast_tensors" && n.outputs.size() == 1 && broadcast.count(n.outputs[0])) {
            done = true; // read only through its unpack, above
        } else if (n.op == "aten::cosine_similarity")
            done = cosineSimilarity(n, e);
        else if (n.op == "aten::pairwise_distance")
            done = pairwiseDistance(n, e);
        else if (n.op == "aten::triplet_margin_loss")
            done = tripletMarginLoss(n, e);
        else if (n.op == "aten::cross_entropy_loss")
            done = crossEntropy(n, nodes, problem, e);
        else if (n.op == "aten::einsum")
            done = einsumProduct(n, nodes, e);
        else if (n.op == "aten::diag" && !n.outputs.empty() && diagonal.count(n.outputs[0]))
            done = true; // its product reads v instead
        else if (isMatrixProduct(n.op) && n.inputs.size() >= 2 &&
                 (diagonal.count(n.inputs[0]) || diagonal.count(n.inputs[1]))) {
            if (diagonal.count(n.inputs[0])) {
                const std::string &v = diagonal.at(n.inputs[0]);
                const std::string column = e.op("aten::unsqueeze", {Arg::of(v), Arg::integer(1)});
                e.op("aten::mul", {Arg::of(column), Arg::of(n.inputs[1])}, outShape(n), n.outputs[0]);
            } else {
                e.op("aten::mul", {Arg::of(n.inputs[0]), Arg::of(diagonal.at(n.inputs[1]))}, outShape(n), n.outputs[0]);
            }
            done = true;
        }
        // Each expansion checks the node before it emits anything.
        if (!done)
            out.push_back(n);
    }
    return out;
}

} // namespace kf::builtin::detail
