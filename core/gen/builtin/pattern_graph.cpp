#include "gen/builtin/pattern_graph.h"

#include <algorithm>
#include <cctype>

namespace kf::builtin::detail {

namespace {

// Ops whose results are host scalars (sizes, casts to int), not tensors.
bool isScalarOp(const std::string &op)
{
    static const std::set<std::string> ops{"aten::size",  "aten::dim", "aten::numel",       "aten::Int",
                                           "aten::Float", "aten::len", "aten::__getitem__", "aten::ScalarImplicit"};
    return ops.count(op) > 0;
}

std::optional<Shape> broadcastShapes(const Shape &a, const Shape &b)
{
    Shape out(std::max(a.size(), b.size()), 1);
    for (std::size_t i = 0; i < out.size(); ++i) {
        std::int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1, db = i < b.size() ? b[b.size() - 1 - i] : 1;
        if (da != db && da != 1 && db != 1)
            return std::nullopt;
        out[out.size() - 1 - i] = std::max(da, db);
    }
    return out;
}

} // namespace

// torch.arange(end) of a known end, in a dtype that holds its values: a tensor made from nothing,
// its values the element's place (pattern.h's position leaf). Other forms stay host values.
bool isPositions(const Op &op)
{
    if (op.name != "aten::arange" || op.in.size() != 5 || op.in[0].tensor || !op.in[0].constant.is_number_integer() ||
        op.in[0].constant.get<std::int64_t>() < 1)
        return false;
    const nlohmann::json &dtype = op.in[1].constant; // ScalarType: 3 int32, 4 int64, 6 float32, 7 float64
    return dtype.is_null() || (dtype.is_number_integer() && std::set<int>{3, 4, 6, 7}.count(dtype.get<int>()));
}

// "%x.1" -> "x": TorchScript names graph inputs after the forward's arguments, with a version suffix.
std::string tensorOfValue(const std::string &valueName)
{
    std::string s = valueName.rfind('%', 0) == 0 ? valueName.substr(1) : valueName;
    auto dot = s.rfind('.');
    if (dot != std::string::npos && dot + 1 < s.size() &&
        std::all_of(s.begin() + long(dot) + 1, s.end(), [](unsigned char c) { return std::isdigit(c); }))
        s.resize(dot);
    return s;
}

std::int64_t windowOut(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t p, std::int64_t d, bool ceil)
{
    std::int64_t span = in + 2 * p - d * (k - 1) - 1;
    std::int64_t out = (ceil ? (span + s - 1) / s : span / s) + 1;
    // PyTorch drops a last window that would start in the right padding.
    if (ceil && (out - 1) * s >= in + p)
        --out;
    return out;
}

Error unsupportedOp(const std::string &op, const std::string &why)
{
    return makeError(ErrorCode::Unsupported,
                     "the built-in generator cannot implement " + op + (why.empty() ? "" : " " + why) +
                         "; use an LLM generator for this problem");
}

int normDim(std::int64_t dim, std::size_t rank) { return int(dim < 0 ? dim + std::int64_t(rank) : dim); }

std::optional<std::vector<std::int64_t>> intList(const nlohmann::json &j)
{
    std::vector<std::int64_t> out;
    if (j.is_number_integer())
        return std::vector<std::int64_t>{j.get<std::int64_t>()};
    if (!j.is_array())
        return std::nullopt;
    for (const auto &e : j) {
        if (!e.is_number_integer())
            return std::nullopt;
        out.push_back(e.get<std::int64_t>());
    }
    return out;
}

bool isAlias(const std::string &op)
{
    static const std::set<std::string> ops{"aten::view",    "aten::reshape",    "aten::flatten", "aten::unsqueeze",
                                           "aten::squeeze", "aten::contiguous", "aten::clone",   "aten::detach",
                                           "aten::t",       "aten::transpose",  "aten::permute", "aten::numpy_T"};
    return ops.count(op) > 0;
}

bool isTranspose(const Op &op, std::size_t rank)
{
    if (op.name == "aten::t" || op.name == "aten::numpy_T")
        return true;
    if (op.name == "aten::transpose" && op.in.size() >= 3) {
        auto a = intList(op.in[1].constant), b = intList(op.in[2].constant);
        if (!a || !b)
            return false;
        int d0 = normDim((*a)[0], rank), d1 = normDim((*b)[0], rank);
        return std::min(d0, d1) == int(rank) - 2 && std::max(d0, d1) == int(rank) - 1;
    }
    return false;
}

Graph::Graph(const std::vector<OpNode> &nodes, const Problem &problem) : m_problem(problem) { m_status = build(nodes); }

const Value &Graph::value(const std::string &name) const
{
    static const Value none;
    auto it = m_values.find(name);
    return it == m_values.end() ? none : it->second;
}

const Op *Graph::producer(const std::string &name) const
{
    int i = producerIndex(name);
    return i < 0 ? nullptr : &m_ops[std::size_t(i)];
}

int Graph::producerIndex(const std::string &name) const
{
    const Value &v = value(name);
    return v.kind == Value::Kind::Tensor ? v.op : -1;
}

std::vector<int> Graph::consumers(const std::string &name) const
{
    std::vector<int> out;
    for (std::size_t i = 0; i < m_ops.size(); ++i)
        for (const auto &o : m_ops[i].in)
            if (o.tensor && o.value == name) {
                out.push_back(int(i));
                break;
            }
    return out;
}

std::string Graph::throughAliases(const std::string &name) const
{
    std::string v = name;
    while (const Op *op = producer(v)) {
        if (!isAlias(op->name) || op->in.empty())
            break;
        v = op->in[0].value;
    }
    return v;
}

std::string Graph::matchTensor(const std::string &valueName) const
{
    std::string s = tensorOfValue(valueName);
    for (const auto &t : m_problem.inputs)
        if (t.name == s)
            return s;
    for (const auto &t : m_problem.params)
        if (t.name == s)
            return s;
    return {};
}

Status Graph::build(const std::vector<OpNode> &nodes)
{
    std::string lastTuple;
    // Lists of constants (a pooling window, reduced dims): a graph the worker did not run carries
    // the list's value only at its construction.
    std::map<std::string, nlohmann::json> lists;
    // Lists of tensors (cat, stack, einsum's operands): an op that reads one computes with tensors.
    std::set<std::string> tensorLists;
    // Values of scalar ops whose number is not known here.
    std::set<std::string> unresolved;
    for (const OpNode &n : nodes) {
        if (n.op == "prim::Constant")
            continue;
        // A branch or loop that yields nothing (a size check that only warns) computes nothing the
        // result depends on.
        if ((n.op == "prim::If" || n.op == "prim::Loop") && n.outputs.empty())
            continue;
        if (n.op == "prim::If" || n.op == "prim::Loop")
            return unsupportedOp(n.op, "(control flow in the reference)");
        if (n.op == "prim::ListConstruct" && n.outputs.size() == 1 && !n.inputs.empty() &&
            n.constants.size() == n.inputs.size()) {
            nlohmann::json list = nlohmann::json::array();
            for (std::size_t k = 0; k < n.inputs.size(); ++k) {
                const nlohmann::json &c =
                    n.constants[k].is_null() && lists.count(n.inputs[k]) ? lists[n.inputs[k]] : n.constants[k];
                if (c.is_number())
                    list.push_back(c);
            }
            if (list.size() == n.inputs.size())
                lists[n.outputs[0]] = list;
        }
        // A size of a tensor whose shape is known (x.size(-1) in a layer_norm's shape).
        if (n.op == "aten::size" && n.inputs.size() == 2 && n.outputs.size() == 1 && n.constants.size() == 2 &&
            n.constants[1].is_number_integer()) {
            const Value &v = value(n.inputs[0]);
            const std::string t = v.kind == Value::Kind::Other ? matchTensor(n.inputs[0]) : std::string();
            const TensorSpec *spec = t.empty() ? nullptr : m_problem.tensor(t);
            const Shape &shape = spec ? spec->shape : v.shape;
            const int d = normDim(n.constants[1].get<std::int64_t>(), shape.size());
            if ((spec || v.kind != Value::Kind::Other) && d >= 0 && d < int(shape.size()))
                lists[n.outputs[0]] = shape[std::size_t(d)];
        }
        // x.size() (every dim, as a list), and an element of a known list (x.size()[0], as
        // F.kl_div's batchmean divides by).
        if (n.op == "aten::size" && n.inputs.size() == 1 && n.outputs.size() == 1) {
            const Value &v = value(n.inputs[0]);
            const std::string t = v.kind == Value::Kind::Other ? matchTensor(n.inputs[0]) : std::string();
            const TensorSpec *spec = t.empty() ? nullptr : m_problem.tensor(t);
            if (spec || v.kind != Value::Kind::Other)
                lists[n.outputs[0]] = nlohmann::json(spec ? spec->shape : v.shape);
        }
        if (n.op == "aten::__getitem__" && n.inputs.size() == 2 && n.outputs.size() == 1 && n.constants.size() == 2 &&
            n.constants[1].is_number_integer() && lists.count(n.inputs[0]) && lists[n.inputs[0]].is_array()) {
            const nlohmann::json &list = lists[n.inputs[0]];
            const int k = normDim(n.constants[1].get<std::int64_t>(), list.size());
            if (k >= 0 && k < int(list.size()))
                lists[n.outputs[0]] = list[std::size_t(k)];
        }
        if (n.op == "prim::TupleIndex" && n.inputs.size() == 2 && !n.outputs.empty()) {
            // Indexing a tuple built just before: the element itself.
            for (const OpNode &t : nodes)
                if (t.op == "prim::TupleConstruct" && !t.outputs.empty() && t.outputs[0] == n.inputs[0] &&
                    n.constants.size() > 1 && n.constants[1].is_number_integer()) {
                    auto k = n.constants[1].get<std::size_t>();
                    if (k < t.inputs.size())
                        m_values[n.outputs[0]] = value(t.inputs[k]);
                }
            continue;
        }
        if (n.op.rfind("prim::", 0) == 0) {
            if (n.op == "prim::TupleConstruct" && !n.outputs.empty())
                lastTuple = n.outputs[0];
            if (n.op == "prim::ListConstruct" && !n.outputs.empty() &&
                std::any_of(n.inputs.begin(), n.inputs.end(), [&](const std::string &v) {
                    auto it = m_values.find(v);
                    return it != m_values.end() ? it->second.kind != Value::Kind::Other : !matchTensor(v).empty();
                }))
                tensorLists.insert(n.outputs[0]);
            for (const auto &o : n.outputs)
                m_values[o] = Value{};
            continue;
        }

        Op op;
        op.name = n.op;
        op.out = n.outputs;
        op.graphShapes = n.outputShapes;
        bool anyTensor = false;
        for (std::size_t k = 0; k < n.inputs.size(); ++k) {
            const std::string &name = n.inputs[k];
            Operand o;
            o.value = name;
            auto it = m_values.find(name);
            if (it == m_values.end()) {
                if (std::string t = matchTensor(name); !t.empty()) {
                    const TensorSpec *spec = m_problem.tensor(t);
                    it = m_values.emplace(name, Value{Value::Kind::Leaf, t, spec->shape, -1}).first;
                }
            }
            o.tensor = it != m_values.end() && it->second.kind != Value::Kind::Other;
            if (!o.tensor)
                o.constant = k < n.constants.size() ? n.constants[k] : nlohmann::json();
            if (!o.tensor && o.constant.is_null() && lists.count(name))
                o.constant = lists[name];
            anyTensor = anyTensor || o.tensor;
            op.in.push_back(std::move(o));
        }
        // A number the reference computes (a size, an element of a shape) that the graph does not
        // give: taking it for None would compute with a default in its place.
        for (const Operand &o : op.in)
            if (anyTensor && !o.tensor && o.constant.is_null() && unresolved.count(o.value))
                return unsupportedOp(n.op, "with a number the reference computes (" + o.value +
                                               ") that the built-in generator cannot work out");
        if (!anyTensor && std::any_of(n.inputs.begin(), n.inputs.end(),
                                      [&](const std::string &v) { return tensorLists.count(v) > 0; }))
            return unsupportedOp(n.op, "of a list of tensors");
        if (isScalarOp(n.op) || (!anyTensor && !isPositions(op))) {
            for (const auto &o : n.outputs) {
                m_values[o] = Value{};
                if (!lists.count(o))
                    unresolved.insert(o);
            }
            continue;
        }
        const int index = int(m_ops.size());
        auto shape = inferShape(op);
        if (!shape)
            return shape.error();
        // A view of a problem tensor is still that tensor, seen with another shape; transposes are
        // not (they change the layout), so they stay ops for the matrix-product matcher.
        const Value &src = value(op.in[0].value);
        bool leafView = isAlias(op.name) && src.kind == Value::Kind::Leaf && op.name != "aten::t" &&
            op.name != "aten::transpose" && op.name != "aten::permute" && op.name != "aten::numpy_T";
        for (const auto &o : op.out)
            m_values[o] = leafView ? Value{Value::Kind::Leaf, src.tensor, *shape, -1}
                                   : Value{Value::Kind::Tensor, {}, *shape, index};
        m_ops.push_back(std::move(op));
    }
    if (m_ops.empty())
        return makeError(ErrorCode::Unsupported, "the reference computes nothing the built-in generator can see");
    if (!lastTuple.empty() && consumers(lastTuple).empty() && !nodes.back().outputs.empty() &&
        lastTuple == nodes.back().outputs[0])
        return unsupportedOp("prim::TupleConstruct", "(the reference returns a tuple of tensors)");
    const Op &last = m_ops.back();
    m_result = last.out[0];
    // max/min along a dim yield (values, indices); the problem's output dtype says which is returned.
    if (last.out.size() == 2 && !m_problem.outputs.empty() && m_problem.outputs[0].dtype == DType::I64)
        m_result = last.out[1];
    return Ok{};
}

namespace {

// The recorded shape of an op's output, for when it cannot be worked out here (empty when none).
Shape recordedShape(const Op &op)
{
    if (!op.graphShapes.empty())
        return op.graphShapes[0];
    return Shape{};
}

// view, reshape, flatten, unsqueeze, squeeze: the same elements in another shape.
Shape reshapedShape(const Op &op, const Shape &x)
{
    const std::string &n = op.name;
    if (n == "aten::view" || n == "aten::reshape") {
        auto dims = op.in.size() > 1 ? intList(op.in[1].constant) : std::nullopt;
        if (!dims)
            return recordedShape(op);
        std::int64_t known = 1, total = numel(x);
        for (auto d : *dims)
            known *= d == -1 ? 1 : d;
        Shape s;
        for (auto d : *dims)
            s.push_back(d == -1 && known > 0 ? total / known : d);
        if (numel(s) != total)
            return recordedShape(op);
        return s;
    }
    if (n == "aten::flatten") {
        auto a = op.in.size() > 1 ? intList(op.in[1].constant) : std::nullopt;
        auto b = op.in.size() > 2 ? intList(op.in[2].constant) : std::nullopt;
        int s0 = a ? normDim((*a)[0], x.size()) : 0, s1 = b ? normDim((*b)[0], x.size()) : int(x.size()) - 1;
        // A dim outside the shape: the shape is not known (an op the recogniser does not take
        // made it), and that op stops the recognition.
        if (s0 < 0 || s0 > int(x.size()))
            return recordedShape(op);
        Shape s(x.begin(), x.begin() + s0);
        std::int64_t mid = 1;
        for (int i = s0; i <= s1 && i < int(x.size()); ++i)
            mid *= x[std::size_t(i)];
        s.push_back(mid);
        s.insert(s.end(), x.begin() + std::min<long>(s1 + 1, long(x.size())), x.end());
        return s;
    }
    if (n == "aten::unsqueeze") {
        auto d = intList(op.in[1].constant);
        if (!d)
            return recordedShape(op);
        const int at = normDim((*d)[0], x.size() + 1);
        if (at < 0 || at > int(x.size()))
            return recordedShape(op);
        Shape s = x;
        s.insert(s.begin() + at, 1);
        return s;
    }
    // squeeze drops dims of size 1: only the given ones, when dims are given.
    auto d = op.in.size() > 1 ? intList(op.in[1].constant) : std::nullopt;
    Shape s;
    for (std::size_t i = 0; i < x.size(); ++i) {
        bool drop = x[i] == 1 &&
            (!d || std::count_if(d->begin(), d->end(), [&](auto v) { return normDim(v, x.size()) == int(i); }) > 0);
        if (!drop)
            s.push_back(x[i]);
    }
    return s;
}

// t, numpy_T, transpose, permute: the dims reordered.
Shape transposedShape(const Op &op, const Shape &x)
{
    const std::string &n = op.name;
    Shape s = x;
    if (n == "aten::permute") {
        auto p = intList(op.in[1].constant);
        if (!p || p->size() != x.size())
            return recordedShape(op);
        for (std::size_t i = 0; i < x.size(); ++i)
            s[i] = x[std::size_t(normDim((*p)[i], x.size()))];
    } else if (n == "aten::transpose") {
        auto a = intList(op.in[1].constant), b = intList(op.in[2].constant);
        if (!a || !b)
            return recordedShape(op);
        std::swap(s[std::size_t(normDim((*a)[0], x.size()))], s[std::size_t(normDim((*b)[0], x.size()))]);
    } else if (s.size() == 2) {
        std::swap(s[0], s[1]);
    }
    return s;
}

// Ops whose output has the shape of their first operand.
bool keepsShape(const std::string &n)
{
    return isAlias(n) || n == "aten::softmax" || n == "aten::log_softmax" || n == "aten::_softmax" ||
        n == "aten::layer_norm" || n == "aten::batch_norm" || n == "aten::dropout" || n == "aten::group_norm" ||
        n == "aten::instance_norm" || n == "aten::rms_norm" || n == "aten::flip" || n == "aten::cumsum" ||
        n == "aten::cumprod";
}

Shape expandedShape(const Op &op, const Shape &x)
{
    auto dims = op.in.size() > 1 ? intList(op.in[1].constant) : std::nullopt;
    if (!dims)
        return recordedShape(op);
    Shape s(*dims);
    for (std::size_t i = 0; i < s.size(); ++i) {
        const std::size_t from = i + x.size();
        if (s[i] == -1 && from >= s.size())
            s[i] = x[from - s.size()];
    }
    return s;
}

bool isLossOp(const std::string &n)
{
    return n == "aten::mse_loss" || n == "aten::l1_loss" || n == "aten::smooth_l1_loss" || n == "aten::huber_loss" ||
        n == "aten::kl_div" || n == "aten::soft_margin_loss";
}

// A loss is a scalar unless its reduction is none (0).
Shape lossShape(const Op &op, const Shape &x)
{
    const nlohmann::json &r = op.in.size() > 2 ? op.in[2].constant : nlohmann::json();
    if (r.is_number_integer() && r.get<int>() == 0)
        return x;
    return Shape{};
}

bool isVectorNormOp(const std::string &n) { return n == "aten::norm" || n == "aten::linalg_vector_norm"; }

bool isReductionOp(const Op &op)
{
    const std::string &n = op.name;
    return n == "aten::sum" || n == "aten::mean" || n == "aten::prod" || n == "aten::amax" || n == "aten::amin" ||
        n == "aten::argmax" || n == "aten::argmin" || n == "aten::logsumexp" || ((n == "aten::max" || n == "aten::min") && op.in.size() > 1 && !op.in[1].tensor) ||
        isVectorNormOp(n) || n == "aten::frobenius_norm";
}

// The dims and keepdim operands: (self, dim, keepdim) or, for norms, (self, p, dim, keepdim).
Shape reducedShape(const Op &op, const Shape &x)
{
    const std::size_t at = isVectorNormOp(op.name) ? 2 : 1;
    auto dims = op.in.size() > at ? intList(op.in[at].constant) : std::nullopt;
    bool keep = op.in.size() > at + 1 && op.in[at + 1].constant.is_boolean() && op.in[at + 1].constant.get<bool>();
    if (!dims || dims->empty())
        return keep ? Shape(x.size(), 1) : Shape{};
    Shape s;
    for (std::size_t i = 0; i < x.size(); ++i) {
        bool reduced =
            std::count_if(dims->begin(), dims->end(), [&](auto d) { return normDim(d, x.size()) == int(i); }) > 0;
        if (!reduced)
            s.push_back(x[i]);
        else if (keep)
            s.push_back(1);
    }
    return s;
}

bool isProductOp(const std::string &n)
{
    return n == "aten::matmul" || n == "aten::mm" || n == "aten::bmm" || n == "aten::addmm" || n == "aten::baddbmm" ||
        n == "aten::linear";
}

// A matrix product of `a` and `b` (linear: b is the [out, in] weight), batch dims broadcast.
Shape productShape(const Op &op, const Shape &a, const Shape &b)
{
    if (a.size() < 2 || b.size() < 1)
        return recordedShape(op);
    if (op.name == "aten::linear") {
        Shape s(a.begin(), a.end() - 1);
        s.push_back(b[0]);
        return s;
    }
    if (b.size() < 2)
        return recordedShape(op);
    auto batch = broadcastShapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
    if (!batch)
        return recordedShape(op);
    Shape s = *batch;
    s.push_back(a[a.size() - 2]);
    s.push_back(b.back());
    return s;
}

// The poolings: the last 1, 2 or 3 dims of the input windowed, the others kept.
Shape windowedShape(const Op &op, const Shape &x)
{
    const PoolWindow w = poolWindow(op);
    if (x.size() < std::size_t(w.dims) + 1)
        return recordedShape(op);
    Shape out = x;
    for (std::size_t i = 0; i < std::size_t(w.dims); ++i) {
        std::int64_t &o = out[x.size() - std::size_t(w.dims) + i];
        o = windowOut(o, w.kernel[i], w.stride[i], w.pad[i], w.dilation[i], w.ceil);
    }
    return out;
}

} // namespace

int poolDims(const std::string &op)
{
    for (const char *kind : {"aten::max_pool", "aten::avg_pool"})
        for (int d = 1; d <= 3; ++d)
            if (op == kind + std::to_string(d) + "d")
                return d;
    return 0;
}

// max_poolNd(self, kernel, stride, padding, dilation, ceil_mode) or
// avg_poolNd(self, kernel, stride, padding, ceil_mode, ...).
PoolWindow poolWindow(const Op &op)
{
    PoolWindow w;
    w.dims = poolDims(op.name);
    w.max = op.name.rfind("aten::max_", 0) == 0;
    auto perDim = [&](std::size_t k, std::int64_t dflt) {
        std::vector<std::int64_t> v(std::size_t(w.dims), dflt);
        auto l = k < op.in.size() ? intList(op.in[k].constant) : std::nullopt;
        if (l && !l->empty())
            for (std::size_t i = 0; i < v.size(); ++i)
                v[i] = (*l)[l->size() == 1 ? 0 : std::min(i, l->size() - 1)];
        return v;
    };
    w.kernel = perDim(1, 1), w.stride = perDim(2, 0), w.pad = perDim(3, 0);
    w.dilation = w.max ? perDim(4, 1) : std::vector<std::int64_t>(std::size_t(w.dims), 1);
    auto strides = op.in.size() > 2 ? intList(op.in[2].constant) : std::nullopt;
    if (!strides || strides->empty())
        w.stride = w.kernel;
    const std::size_t ceil = w.max ? 5 : 4;
    w.ceil = ceil < op.in.size() && op.in[ceil].constant.is_boolean() && op.in[ceil].constant.get<bool>();
    return w;
}

int adaptiveDims(const std::string &op)
{
    for (int d = 1; d <= 3; ++d)
        if (op == "aten::adaptive_avg_pool" + std::to_string(d) + "d")
            return d;
    return 0;
}

std::vector<std::int64_t> adaptiveSizes(const Op &op, const Shape &x)
{
    const int dims = adaptiveDims(op.name);
    std::vector<std::int64_t> out;
    const nlohmann::json sizes = op.in.size() > 1 ? op.in[1].constant : nlohmann::json();
    for (int i = 0; i < dims && std::size_t(dims) <= x.size(); ++i) {
        const std::int64_t in = x[x.size() - std::size_t(dims) + std::size_t(i)];
        const nlohmann::json &v = sizes.is_array() && std::size_t(i) < sizes.size() ? sizes[std::size_t(i)]
            : sizes.is_number_integer()                                            ? sizes
                                                                                   : nlohmann::json();
        out.push_back(v.is_number_integer() ? v.get<std::int64_t>() : in);
    }
    return out;
}

Result<Shape> Graph::inferShape(const Op &op) const
{
    auto in = [&](std::size_t k) -> const Shape & { return value(op.in[k].value).shape; };
    const std::string &n = op.name;
    const Shape &x = in(0);

    if (isPositions(op))
        return Shape{op.in[0].constant.get<std::int64_t>()};
    if (n == "aten::view" || n == "aten::reshape" || n == "aten::flatten" || n == "aten::unsqueeze" ||
        n == "aten::squeeze")
        return reshapedShape(op, x);
    if (n == "aten::t" || n == "aten::numpy_T" || n == "aten::transpose" || n == "aten::permute")
        return transposedShape(op, x);
    if (keepsShape(n))
        return x;
    if (n == "aten::expand_as" && op.in.size() > 1)
        return in(1);
    if (n == "aten::expand")
        return expandedShape(op, x);
    if (isLossOp(n))
        return lossShape(op, x);
    if (isReductionOp(op))
        return reducedShape(op, x);
    if (isProductOp(n)) {
        const bool shifted = n == "aten::addmm" || n == "aten::baddbmm"; // (bias, a, b)
        return productShape(op, in(shifted ? 1 : 0), in(shifted ? 2 : 1));
    }
    if (isConvOp(n)) {
        auto c = op.in.size() > 1 ? convGeometry(op, x, in(1)) : Result<ConvSpec>(unsupportedOp(n));
        return c ? c->outShape : recordedShape(op);
    }
    if (poolDims(n))
        return windowedShape(op, x);
    if (const int dims = adaptiveDims(n); dims && x.size() >= std::size_t(dims)) {
        Shape s(x.begin(), x.end() - dims);
        for (std::int64_t o : adaptiveSizes(op, x))
            s.push_back(o);
        return s;
    }
    if (isElementwiseOp(n)) {
        Shape s = x;
        for (std::size_t k = 1; k < op.in.size(); ++k) {
            if (!op.in[k].tensor)
                continue;
            auto b = broadcastShapes(s, in(k));
            if (!b)
                return makeError(ErrorCode::Unsupported,
                                 n + ": operands of shapes " + shapeText(s) + " and " + shapeText(in(k)) +
                                     " do not broadcast");
            s = *b;
        }
        return s;
    }
    return recordedShape(op);
}

} // namespace kf::builtin::detail
