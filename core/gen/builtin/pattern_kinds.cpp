// The matchers for each pattern kind, run on a resolved graph (pattern_graph.h).
#include "gen/builtin/pattern_graph.h"

#include <algorithm>

namespace kf::builtin::detail {

namespace {

bool isReduction(const Op &op)
{
    const std::string &n = op.name;
    if (n == "aten::max" || n == "aten::min") return op.in.size() > 1 && !op.in[1].tensor;
    return n == "aten::sum" || n == "aten::mean" || n == "aten::amax" || n == "aten::amin" || n == "aten::argmax" ||
           n == "aten::argmin";
}

RowGeometry geometry(const Shape &x, int first, int count, bool keepdim)
{
    RowGeometry g;
    g.dim = first;
    g.dims = count;
    g.keepdim = keepdim;
    for (int i = 0; i < int(x.size()); ++i) {
        auto d = x[std::size_t(i)];
        if (i < first) g.outer *= d;
        else if (i < first + count) g.len *= d;
        else g.inner *= d;
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
        if (!op) return makeError("unsupported", "the built-in generator could not follow the reference's result");
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

// The reduced dims of a reduction: a list, an int, or None (all dims). They must be consecutive.
Result<std::pair<int, int>> reducedDims(const Op &op, const Shape &x)
{
    auto dims = op.in.size() > 1 ? intList(op.in[1].constant) : std::nullopt;
    if (!dims || dims->empty()) return std::pair<int, int>{0, int(std::max<std::size_t>(x.size(), 1))};
    std::vector<int> d;
    for (auto v : *dims) d.push_back(normDim(v, x.size()));
    std::sort(d.begin(), d.end());
    for (std::size_t i = 1; i < d.size(); ++i)
        if (d[i] != d[i - 1] + 1) return unsupportedOp(op.name, "over dims that are not adjacent");
    return std::pair<int, int>{d.front(), int(d.size())};
}

// The window of max_pool2d(self, kernel, stride, padding, dilation, ceil_mode) or
// avg_pool2d(self, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override).
PoolSpec poolSpec(const Graph &g, const Op &op)
{
    PoolSpec s;
    s.op = op.name;
    s.max = op.name == "aten::max_pool2d";
    auto pair = [&](std::size_t k, std::int64_t out[2]) {
        auto l = k < op.in.size() ? intList(op.in[k].constant) : std::nullopt;
        if (l && !l->empty()) out[0] = (*l)[0], out[1] = l->size() > 1 ? (*l)[1] : (*l)[0];
    };
    pair(1, s.kernel);
    s.stride[0] = s.kernel[0], s.stride[1] = s.kernel[1]; // no stride: stride = kernel
    pair(2, s.stride), pair(3, s.pad);
    if (s.max) pair(4, s.dilation);
    std::size_t ceil = s.max ? 5 : 4;
    s.ceilMode = ceil < op.in.size() && flag(op.in[ceil]);
    if (!s.max) s.countIncludePad = op.in.size() <= 5 || flag(op.in[5]);
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
        if (val.kind == Value::Kind::Leaf) return std::pair{val.tensor, trans};
        const Op *op = g.producer(v);
        if (!op || !isAlias(op->name) || op->name == "aten::permute") return std::nullopt;
        if (isTranspose(*op, g.shape(op->in[0].value).size())) trans = !trans;
        v = op->in[0].value;
    }
}

} // namespace

Result<Pattern> matchRows(const Graph &g, int anchor)
{
    const Op &op = g.ops()[std::size_t(anchor)];
    if (auto st = onlyAliasesAfter(g, op); !st) return st.error();
    Pattern p;
    p.anchor = op.name;
    const std::string &in = op.in[0].value;
    const Shape &x = g.shape(in);
    ProgramBuilder b(g, x);
    auto input = b.build(in);
    if (!input) return input.error();
    p.input = *input;
    std::set<int> used = b.used();
    used.insert(anchor);
    if (auto st = noneLeft(g, used); !st) return st.error();

    const std::string &n = op.name;
    if (n == "aten::softmax" || n == "aten::log_softmax" || n == "aten::_softmax" || n == "aten::_log_softmax") {
        auto dim = intList(op.in.size() > 1 ? op.in[1].constant : nlohmann::json());
        if (!dim) return unsupportedOp(n, "with a computed dim");
        if (op.in.size() > 2 && !op.in[2].constant.is_null() && !op.in[2].constant.is_boolean())
            return unsupportedOp(n, "with a dtype conversion");
        p.kind = PatternKind::Softmax;
        p.logSoftmax = n.find("log_softmax") != std::string::npos;
        p.row = geometry(x, normDim((*dim)[0], x.size()), 1, true);
    } else if (n == "aten::layer_norm") {
        auto shape = intList(op.in.size() > 1 ? op.in[1].constant : nlohmann::json());
        if (!shape || shape->empty() || shape->size() > x.size())
            return unsupportedOp(n, "with a computed normalized shape");
        p.kind = PatternKind::LayerNorm;
        p.row = geometry(x, int(x.size() - shape->size()), int(shape->size()), true);
        for (std::size_t k : {std::size_t(2), std::size_t(3)}) {
            if (k >= op.in.size() || !op.in[k].tensor) continue;
            const Value &v = g.value(op.in[k].value);
            if (v.kind != Value::Kind::Leaf || numel(v.shape) != p.row.len)
                return unsupportedOp(n, "with a computed weight or bias");
            (k == 2 ? p.weight : p.bias) = v.tensor;
        }
        if (op.in.size() < 5 || !op.in[4].constant.is_number()) return unsupportedOp(n, "with a computed eps");
        p.eps = op.in[4].constant.get<double>();
    } else if (n == "aten::rms_norm") {
        auto shape = intList(op.in.size() > 1 ? op.in[1].constant : nlohmann::json());
        if (!shape || shape->empty() || shape->size() > x.size())
            return unsupportedOp(n, "with a computed normalized shape");
        p.kind = PatternKind::RMSNorm;
        p.row = geometry(x, int(x.size() - shape->size()), int(shape->size()), true);
        if (op.in.size() > 2 && op.in[2].tensor) {
            const Value &v = g.value(op.in[2].value);
            if (v.kind != Value::Kind::Leaf || numel(v.shape) != p.row.len)
                return unsupportedOp(n, "with a computed weight");
            p.weight = v.tensor;
        }
        // No eps: PyTorch uses the float32 machine epsilon.
        p.eps = op.in.size() > 3 && op.in[3].constant.is_number() ? op.in[3].constant.get<double>() : 1.1920928955078125e-07;
    } else if (isReduction(op)) {
        auto dims = reducedDims(op, x);
        if (!dims) return dims.error();
        p.kind = PatternKind::Reduce;
        bool arg = n == "aten::argmax" || n == "aten::argmin";
        bool keep = op.in.size() > 2 && flag(op.in[2]);
        p.row = geometry(x, dims->first, dims->second, keep);
        if (n == "aten::max" || n == "aten::min") {
            bool indices = g.result() != op.out[0] && g.throughAliases(g.result()) == op.out[1];
            p.reduceOp = std::string(indices ? "arg" : "a") + (n == "aten::max" ? "max" : "min");
            arg = indices;
        } else {
            p.reduceOp = n.substr(6);
        }
        if ((n == "aten::sum" || n == "aten::mean") && op.in.size() > 3 && !op.in[3].constant.is_null())
            return unsupportedOp(n, "with a dtype conversion");
        DType want = arg ? DType::I64 : DType::F32;
        if (g.problem().outputs[0].dtype != want)
            return unsupportedOp(n, "returning " + toString(g.problem().outputs[0].dtype));
    } else if (n == "aten::max_pool2d" || n == "aten::avg_pool2d") {
        p.kind = PatternKind::Pool;
        p.pool = poolSpec(g, op);
        p.row = geometry(x, 2, 2, false);
    } else {
        return unsupportedOp(n);
    }
    return p;
}

Result<Pattern> matchMatmul(const Graph &g, const std::vector<int> &gemms)
{
    Pattern p;
    p.kind = PatternKind::Matmul;
    std::map<std::string, int> accs;
    std::set<int> used;
    for (int i : gemms) {
        const Op &op = g.ops()[std::size_t(i)];
        GemmSpec s;
        s.op = op.name;
        bool shifted = op.name == "aten::addmm" || op.name == "aten::baddbmm";
        auto a = matrixOperand(g, op.in[shifted ? 1 : 0].value), b = matrixOperand(g, op.in[shifted ? 2 : 1].value);
        if (!a || !b) return unsupportedOp(op.name, "of computed operands");
        s.a = a->first, s.transA = a->second, s.b = b->first, s.transB = b->second;
        if (op.name == "aten::linear") s.transB = !s.transB; // weight is [N, K]
        std::size_t biasAt = shifted ? 0 : op.name == "aten::linear" ? 2 : 99;
        if (biasAt < op.in.size() && op.in[biasAt].tensor) {
            const Value &v = g.value(op.in[biasAt].value);
            if (v.kind != Value::Kind::Leaf) return unsupportedOp(op.name, "with a computed bias");
            s.bias = v.tensor;
        }
        if (shifted && op.in.size() > 4) {
            if (op.in[3].constant.is_number()) s.beta = op.in[3].constant.get<double>();
            if (op.in[4].constant.is_number()) s.alpha = op.in[4].constant.get<double>();
        }
        const Shape &out = g.shape(op.out[0]);
        const Shape &as = g.shape(op.in[shifted ? 1 : 0].value);
        if (out.size() < 2 || as.empty()) return unsupportedOp(op.name, "of vectors");
        s.batch.assign(out.begin(), out.end() - 2);
        s.m = out[out.size() - 2], s.n = out.back(), s.k = as.back();
        if (op.name == "aten::linear") s.batch.clear(), s.m = numel(out) / s.n;
        p.gemms.push_back(s);
        accs[op.out[0]] = int(p.gemms.size()) - 1;
        used.insert(i);
        p.anchor = p.anchor.empty() ? op.name : p.anchor;
    }
    std::string epilogueEnd = g.result();
    if (const Op *last = g.producer(g.throughAliases(epilogueEnd));
        last && (last->name == "aten::softmax" || last->name == "aten::log_softmax")) {
        p.rowOpAfter = last->name;
        used.insert(g.producerIndex(g.throughAliases(epilogueEnd)));
        epilogueEnd = last->in[0].value;
    }
    ProgramBuilder b(g, g.shape(epilogueEnd), accs);
    auto prog = b.build(epilogueEnd);
    if (!prog) return prog.error();
    p.program = *prog;
    used.insert(b.used().begin(), b.used().end());
    if (auto st = noneLeft(g, used); !st) return st.error();
    return p;
}

Result<Pattern> matchConv(const Graph &g, const std::vector<int> &anchors)
{
    const Op &op = g.ops()[std::size_t(anchors.front())];
    if (op.name != "aten::conv2d") return unsupportedOp(op.name);
    Pattern p;
    p.kind = PatternKind::Conv2d;
    p.anchor = op.name;
    ConvSpec c;
    auto leafOf = [&](std::size_t k) -> std::string {
        if (k >= op.in.size() || !op.in[k].tensor) return {};
        const Value &v = g.value(op.in[k].value);
        return v.kind == Value::Kind::Leaf ? v.tensor : "?";
    };
    c.x = leafOf(0), c.weight = leafOf(1), c.bias = leafOf(2);
    if (c.x.empty() || c.x == "?" || c.weight.empty() || c.weight == "?" || c.bias == "?")
        return unsupportedOp(op.name, "of computed operands");
    auto pair = [&](std::size_t k, std::int64_t out[2]) {
        auto l = k < op.in.size() ? intList(op.in[k].constant) : std::nullopt;
        if (l && !l->empty()) out[0] = (*l)[0], out[1] = l->size() > 1 ? (*l)[1] : (*l)[0];
    };
    if (op.in.size() > 4 && op.in[4].constant.is_string()) return unsupportedOp(op.name, "with string padding");
    pair(3, c.stride), pair(4, c.pad), pair(5, c.dilation);
    if (op.in.size() > 6 && op.in[6].constant.is_number_integer()) c.groups = op.in[6].constant.get<std::int64_t>();
    c.outShape = g.shape(op.out[0]);
    p.conv = c;

    std::set<int> used{anchors.front()};
    std::string epilogueEnd = g.result();
    if (anchors.size() == 2) {
        const Op &pool = g.ops()[std::size_t(anchors[1])];
        if (pool.name != "aten::max_pool2d" && pool.name != "aten::avg_pool2d") return unsupportedOp(pool.name, "after aten::conv2d");
        if (auto st = onlyAliasesAfter(g, pool); !st) return st.error();
        p.pool = poolSpec(g, pool);
        used.insert(anchors[1]);
        epilogueEnd = pool.in[0].value;
    } else if (anchors.size() > 2) {
        return unsupportedOp(g.ops()[std::size_t(anchors[2])].name, "after aten::conv2d");
    }
    ProgramBuilder b(g, g.shape(epilogueEnd), {{op.out[0], 0}});
    auto prog = b.build(epilogueEnd);
    if (!prog) return prog.error();
    p.program = *prog;
    used.insert(b.used().begin(), b.used().end());
    if (auto st = noneLeft(g, used); !st) return st.error();
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
        if (op.in.size() < 2) return nullptr;
        if (op.in[0].value == v) return &op.in[1];
        if (op.in[1].value == v) return &op.in[0];
        return nullptr;
    };
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const Op &mean = ops[i];
        if (mean.name != "aten::mean" || mean.in.size() < 3 || !flag(mean.in[2])) continue;
        const Shape &x = g.shape(mean.in[0].value);
        auto dims = reducedDims(mean, x);
        if (!dims || dims->first != int(x.size()) - 1 || dims->second != 1) continue;
        const Op *sq = g.producer(mean.in[0].value);
        if (!sq) continue;
        std::string base;
        if (sq->name == "aten::mul" && sq->in.size() == 2 && sq->in[0].tensor && sq->in[0].value == sq->in[1].value)
            base = sq->in[0].value;
        else if ((sq->name == "aten::pow" && sq->in.size() == 2 && sq->in[1].constant == 2) || sq->name == "aten::square")
            base = sq->in[0].value;
        if (base.empty()) continue;

        const Op *add = soleConsumer(mean.out[0]);
        if (!add || add->name != "aten::add" || add->in.size() < 2 || add->in[1].tensor || !add->in[1].constant.is_number())
            continue;
        if (add->in.size() > 2 && add->in[2].constant.is_number() && add->in[2].constant.get<double>() != 1.0) continue;
        const Op *root = soleConsumer(add->out[0]);
        if (!root || (root->name != "aten::rsqrt" && root->name != "aten::sqrt")) continue;
        const bool divide = root->name == "aten::sqrt";
        const Op *norm = soleConsumer(root->out[0]);
        if (!norm || norm->name != (divide ? "aten::div" : "aten::mul")) continue;
        const Operand *xo = other(*norm, root->out[0]);
        if (!xo || xo->value != base || (divide && norm->in[1].value != root->out[0])) continue;

        Pattern p;
        p.kind = PatternKind::RMSNorm;
        p.anchor = "aten::mean";
        p.eps = add->in[1].constant.get<double>();
        p.row = geometry(x, int(x.size()) - 1, 1, true);
        std::set<int> used;
        for (const Op *o : {&mean, sq, add, root, norm}) used.insert(int(o - ops.data()));
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
        if (g.throughAliases(g.result()) != end) continue;
        ProgramBuilder b(g, x);
        auto input = b.build(base);
        if (!input) return Result<Pattern>(input.error());
        p.input = *input;
        used.insert(b.used().begin(), b.used().end());
        if (auto st = noneLeft(g, used); !st) return Result<Pattern>(st.error());
        return Result<Pattern>(p);
    }
    return std::nullopt;
}

} // namespace kf::builtin::detail
