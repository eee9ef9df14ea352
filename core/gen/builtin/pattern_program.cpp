// Building fused elementwise programs from the graph: prologues of row ops, whole elementwise
// problems, and the epilogues of matrix products and convolutions.
#include "gen/builtin/pattern_graph.h"

namespace kf::builtin::detail {

namespace {

bool broadcastsInto(const Shape &view, const Shape &target)
{
    if (view.size() > target.size())
        return false;
    for (std::size_t i = 0; i < view.size(); ++i) {
        std::int64_t v = view[view.size() - 1 - i], t = target[target.size() - 1 - i];
        if (v != t && v != 1)
            return false;
    }
    return true;
}

} // namespace

ProgramBuilder::ProgramBuilder(const Graph &g, Shape programShape, std::map<std::string, int> accs)
    : m_graph(g), m_accs(std::move(accs))
{
    m_program.shape = std::move(programShape);
}

Result<EwProgram> ProgramBuilder::build(const std::string &value)
{
    auto r = visit(value);
    if (!r)
        return r.error();
    return finish(*r);
}

EwArg ProgramBuilder::step(const std::string &fn, std::vector<EwArg> args, const std::string &op)
{
    m_program.steps.push_back(EwStep{fn, std::move(args), op});
    return EwArg::step(int(m_program.steps.size()) - 1);
}

Result<EwProgram> ProgramBuilder::finish(EwArg result)
{
    m_program.result = result;
    if (m_reshaped)
        for (const Leaf &l : m_program.leaves)
            if (l.broadcast(m_program.shape))
                return makeError(ErrorCode::Unsupported,
                                 "a broadcast of '" + l.tensor +
                                     "' after a reshape is not fused by the built-in generator");
    return m_program;
}

Result<EwArg> ProgramBuilder::leaf(const std::string &tensor, const Shape &view)
{
    if (!broadcastsInto(view, m_program.shape))
        return makeError(ErrorCode::Unsupported,
                         "'" + tensor + "' of shape " + shapeText(view) + " does not broadcast to " +
                             shapeText(m_program.shape));
    for (std::size_t i = 0; i < m_program.leaves.size(); ++i)
        if (m_program.leaves[i].tensor == tensor && m_program.leaves[i].view == view)
            return EwArg::leaf(int(i));
    const TensorSpec *spec = m_graph.problem().tensor(tensor);
    if (spec && spec->dtype != DType::F32 && spec->dtype != DType::Bool && spec->dtype != DType::I64)
        return makeError(ErrorCode::Unsupported,
                         "'" + tensor + "' is " + toString(spec->dtype) +
                             "; the built-in generator handles float32 tensors (and bool masks and int64 indices)");
    Leaf l{tensor, spec ? spec->shape : view, view};
    l.dtype = spec ? spec->dtype : DType::F32;
    m_program.leaves.push_back(l);
    return EwArg::leaf(int(m_program.leaves.size()) - 1);
}

Result<EwArg> ProgramBuilder::visit(const std::string &value)
{
    if (auto it = m_memo.find(value); it != m_memo.end())
        return it->second;
    if (auto it = m_accs.find(value); it != m_accs.end()) {
        if (m_accWrap.empty())
            return EwArg::acc(it->second);
        if (!m_wrapped.count(it->second))
            m_wrapped[it->second] = step(m_accWrap, {EwArg::acc(it->second)}, "aten::norm");
        return m_wrapped[it->second];
    }
    const Value &v = m_graph.value(value);
    Result<EwArg> out =
        makeError(ErrorCode::Unsupported, "value " + value + " is not a tensor the built-in generator can read");
    if (v.kind == Value::Kind::Leaf) {
        out = leaf(v.tensor, v.shape);
    } else if (v.kind == Value::Kind::Tensor) {
        const Op &op = m_graph.ops()[std::size_t(v.op)];
        m_used.insert(v.op);
        if (isAlias(op.name)) {
            if (isTranspose(op, m_graph.shape(op.in[0].value).size()) || op.name == "aten::permute")
                return unsupportedOp(op.name, "inside an elementwise chain");
            out = visit(op.in[0].value);
            if (out && numel(v.shape) != numel(m_program.shape))
                return unsupportedOp(op.name, "of an intermediate value to another size");
            m_reshaped = m_reshaped || m_graph.shape(op.in[0].value) != v.shape;
        } else if (op.name == "aten::expand" || op.name == "aten::expand_as") {
            // An explicit broadcast: what the ops after it do implicitly.
            out = visit(op.in[0].value);
        } else if (op.name == "aten::batch_norm") {
            out = batchNorm(op, v.op);
        } else if (op.name == "aten::triu" || op.name == "aten::tril") {
            out = triangle(op);
        } else if (isPositions(op)) {
            out = computedLeaf(positions(v.shape[0]));
        } else if (isElementwiseOp(op.name) &&
                   !((op.name == "aten::max" || op.name == "aten::min") && op.in.size() > 1 && !op.in[1].tensor)) {
            std::vector<OpOperand> operands;
            for (const Operand &o : op.in) {
                OpOperand oo;
                if (o.tensor) {
                    auto a = visit(o.value);
                    if (!a)
                        return a.error();
                    oo.kind = OpOperand::Kind::Tensor;
                    oo.arg = *a;
                } else {
                    oo.constant = o.constant;
                }
                operands.push_back(std::move(oo));
            }
            out = appendElementwise(m_program, op.name, operands);
            if (!out)
                return unsupportedOp(op.name, "here (" + out.error().message + ")");
        } else {
            return unsupportedOp(op.name, "inside an elementwise chain");
        }
    }
    if (out)
        m_memo[value] = *out;
    return out;
}

// triu(x, diagonal) / tril(x, diagonal): x where its element's place in the last two dims is on the
// triangle, else 0; the place comes from the element's index, as a mask leaf (pattern.h).
Result<EwArg> ProgramBuilder::triangle(const Op &op)
{
    const Shape &xs = m_graph.shape(op.in[0].value);
    if (xs.size() < 2)
        return unsupportedOp(op.name, "of a tensor of rank " + std::to_string(xs.size()));
    const nlohmann::json &d = op.in.size() > 1 ? op.in[1].constant : nlohmann::json();
    if ((op.in.size() > 1 && op.in[1].tensor) || !(d.is_null() || d.is_number_integer()))
        return unsupportedOp(op.name, "with a diagonal that is not a number");
    auto x = visit(op.in[0].value);
    if (!x)
        return x.error();
    const EwArg mask = computedLeaf(triangleMask(op.name == "aten::triu", d.is_null() ? 0 : d.get<std::int64_t>(), xs));
    return step("keep", {*x, mask}, op.name);
}

// A leaf no tensor holds (pattern.h), once per program.
EwArg ProgramBuilder::computedLeaf(const Leaf &l)
{
    std::size_t at = 0;
    while (at < m_program.leaves.size() && !(m_program.leaves[at] == l))
        ++at;
    if (at == m_program.leaves.size())
        m_program.leaves.push_back(l);
    return EwArg::leaf(int(at));
}

// Inference-mode batch_norm: (x - running_mean) / sqrt(running_var + eps) * weight + bias, with
// the per-channel tensors broadcast along dim 1.
Result<EwArg> ProgramBuilder::batchNorm(const Op &op, int)
{
    const std::string name = "aten::batch_norm";
    if (op.in.size() < 8)
        return unsupportedOp(name, "with an unexpected signature");
    const nlohmann::json &training = op.in[5].constant;
    if (op.in[5].tensor || !training.is_boolean() || training.get<bool>())
        return unsupportedOp(name, "in training mode (statistics of the batch)");
    auto x = visit(op.in[0].value);
    if (!x)
        return x.error();
    const Shape &xs = m_graph.shape(op.in[0].value);
    if (xs.size() < 2)
        return unsupportedOp(name, "on a tensor of rank " + std::to_string(xs.size()));
    auto channel = [&](std::size_t k, bool required) -> Result<std::optional<EwArg>> {
        const Operand &o = op.in[k];
        if (!o.tensor) {
            if (required)
                return unsupportedOp(name, "without running statistics");
            return std::optional<EwArg>{};
        }
        const Value &v = m_graph.value(o.value);
        if (v.kind != Value::Kind::Leaf || numel(v.shape) != xs[1])
            return unsupportedOp(name, "with computed per-channel tensors");
        Shape view{xs[1]};
        view.resize(xs.size() - 1, 1); // [C, 1, 1]: right-aligned against [B, C, H, W]
        auto l = leaf(v.tensor, view);
        if (!l)
            return l.error();
        return std::optional<EwArg>{*l};
    };
    auto weight = channel(1, false), bias = channel(2, false), mean = channel(3, true), var = channel(4, true);
    for (auto *r : {&weight, &bias, &mean, &var})
        if (!*r)
            return r->error();
    const nlohmann::json &eps = op.in[7].constant;
    if (!eps.is_number())
        return unsupportedOp(name, "with a computed eps");
    auto step = [&](const char *fn, EwArg a, EwArg b) {
        m_program.steps.push_back(EwStep{fn, {a, b}, name});
        return EwArg::step(int(m_program.steps.size()) - 1);
    };
    EwArg centred = step("sub", *x, **mean);
    m_program.steps.push_back(EwStep{"sqrt", {step("add", **var, EwArg::scalar(eps.get<double>()))}, name});
    EwArg y = step("div", centred, EwArg::step(int(m_program.steps.size()) - 1));
    if (*weight)
        y = step("mul", y, **weight);
    if (*bias)
        y = step("add", y, **bias);
    return y;
}

} // namespace kf::builtin::detail
