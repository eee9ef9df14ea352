#include "gen/builtin/pattern.h"

#include "gen/builtin/ew_ops.h"
#include "gen/builtin/pattern_graph.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace kf::builtin {

using namespace detail;

std::string toString(PatternKind k)
{
    switch (k) {
    case PatternKind::Elementwise:
        return "elementwise";
    case PatternKind::Reduce:
        return "reduce";
    case PatternKind::Softmax:
        return "softmax";
    case PatternKind::LayerNorm:
        return "layernorm";
    case PatternKind::RMSNorm:
        return "rmsnorm";
    case PatternKind::Matmul:
        return "matmul";
    case PatternKind::Conv:
        return "conv";
    case PatternKind::Pool:
        return "pool";
    case PatternKind::Normalize:
        return "normalize";
    case PatternKind::Scan:
        return "scan";
    }
    return "?";
}

EwProgram identityProgram(const Shape &shape)
{
    EwProgram p;
    p.shape = shape;
    p.result = EwArg::acc(0);
    return p;
}

EwProgram compose(const EwProgram &inner, const EwProgram &outer)
{
    EwProgram p = inner;
    std::vector<int> leafAt;
    for (const Leaf &l : outer.leaves) {
        int at = -1;
        for (std::size_t i = 0; i < p.leaves.size() && at < 0; ++i)
            if (p.leaves[i] == l)
                at = int(i);
        if (at < 0) {
            p.leaves.push_back(l);
            at = int(p.leaves.size()) - 1;
        }
        leafAt.push_back(at);
    }
    const int stepBase = int(p.steps.size());
    auto map = [&](EwArg a) {
        switch (a.kind) {
        case EwArg::Kind::Acc:
            return inner.result;
        case EwArg::Kind::Leaf:
            return EwArg::leaf(leafAt[std::size_t(a.index)]);
        case EwArg::Kind::Step:
            return EwArg::step(a.index + stepBase);
        case EwArg::Kind::Scalar:
            return a;
        }
        return a;
    };
    for (EwStep s : outer.steps) {
        for (EwArg &a : s.args)
            a = map(a);
        p.steps.push_back(std::move(s));
    }
    p.result = map(outer.result);
    return p;
}

std::int64_t numel(const Shape &s)
{
    std::int64_t n = 1;
    for (auto d : s)
        n *= d;
    return n;
}

std::string shapeText(const Shape &s)
{
    std::string out = "[";
    for (std::size_t i = 0; i < s.size(); ++i)
        out += (i ? ", " : "") + std::to_string(s[i]);
    return out + "]";
}

Leaf triangleMask(bool upper, std::int64_t diagonal, const Shape &shape)
{
    Leaf l;
    l.tensor = std::string(upper ? "upper" : "lower") + " triangle" +
        (diagonal ? " from diagonal " + std::to_string(diagonal) : std::string());
    l.shape = Shape(shape.end() - 2, shape.end());
    l.view = l.shape;
    l.mask = upper ? Leaf::Mask::Upper : Leaf::Mask::Lower;
    l.diagonal = diagonal;
    return l;
}

Leaf positions(std::int64_t n)
{
    Leaf l;
    l.tensor = "positions 0 to " + std::to_string(n - 1);
    l.shape = {n};
    l.view = l.shape;
    l.mask = Leaf::Mask::Index;
    return l;
}

bool foldsAlongRows(const Pattern &p)
{
    static const std::set<std::string> folds{"sum", "mean", "amax", "amin", "logsumexp"};
    return p.kind == PatternKind::Reduce && folds.count(p.reduceOp) && p.row.inner == 1 && !p.tail &&
        p.program.leaves.empty();
}

bool sameRows(const Pattern &a, const Pattern &b)
{
    return a.input.shape == b.input.shape && a.row.outer == b.row.outer && a.row.len == b.row.len &&
        a.row.inner == b.row.inner;
}

bool Leaf::broadcast(const Shape &programShape) const { return !indexTerms(*this, programShape).empty(); }

std::vector<IndexTerm> indexTerms(const Leaf &leaf, const Shape &out)
{
    const std::size_t rank = out.size();
    // The leaf's dims right-aligned against the output; missing leading dims are broadcast.
    Shape view(rank, 1);
    for (std::size_t i = 0; i < leaf.view.size() && i < rank; ++i)
        view[rank - 1 - i] = leaf.view[leaf.view.size() - 1 - i];
    std::vector<IndexTerm> terms;
    std::int64_t outStride = 1, leafStride = 1;
    bool open = false; // the innermost term is still growing over adjacent kept dims
    for (std::size_t k = rank; k-- > 0;) {
        if (view[k] == out[k] && out[k] != 1) {
            if (open) {
                terms.back().mod *= out[k];
            } else {
                terms.push_back(IndexTerm{outStride, out[k], leafStride});
                open = true;
            }
            leafStride *= view[k];
        } else if (out[k] != 1) {
            open = false; // a broadcast dim splits the index
        }
        outStride *= out[k];
    }
    if (terms.size() == 1 && terms[0].div == 1 && terms[0].stride == 1 && terms[0].mod == numel(out))
        return {};
    if (terms.empty() && numel(out) == 1)
        return {};
    if (terms.empty())
        terms.push_back(IndexTerm{1, 1, 0}); // one value read by every element
    return terms;
}

std::string EwProgram::text() const
{
    std::vector<std::string> stepText;
    auto argText = [&](const EwArg &a) -> std::string {
        switch (a.kind) {
        case EwArg::Kind::Leaf:
            return leaves[std::size_t(a.index)].tensor;
        case EwArg::Kind::Step:
            return stepText[std::size_t(a.index)];
        case EwArg::Kind::Acc:
            return a.index == 0 ? "acc" : "acc" + std::to_string(a.index);
        case EwArg::Kind::Scalar: {
            char buf[32];
            std::snprintf(buf, sizeof buf, "%g", a.value);
            return buf;
        }
        }
        return "?";
    };
    // Infix results ("a + b") get parentheses when an infix operation uses them; calls do not.
    std::vector<bool> infix;
    for (const EwStep &s : steps) {
        const EwFunction *f = findEwFunction(s.fn);
        std::string t = f ? std::string(f->text) : s.fn;
        const bool call = t.find('(') < t.find(' ');
        infix.push_back(!call && t.find(' ') != std::string::npos);
        std::string out;
        for (std::size_t i = 0; i < t.size(); ++i) {
            if (t[i] == '$' && i + 1 < t.size()) {
                const EwArg &arg = s.args[std::size_t(t[i + 1] - '0')];
                std::string a = argText(arg);
                bool wrap = !call && arg.kind == EwArg::Kind::Step && infix[std::size_t(arg.index)];
                out += wrap ? "(" + a + ")" : a;
                ++i;
            } else {
                out += t[i];
            }
        }
        stepText.push_back(out);
    }
    return argText(result);
}

std::string Pattern::summary() const
{
    // A chain's first stage names what follows it; products and convolutions say it themselves.
    if (tail && kind != PatternKind::Matmul && kind != PatternKind::Conv) {
        Pattern stage = *this;
        stage.tail = nullptr;
        std::string s = stage.summary();
        for (std::size_t i = 1; i < stages.size(); ++i)
            s += ", together with " + stages[i]->summary();
        return s + ", then " + tail->summary();
    }
    auto of = [&](const EwProgram &p) {
        std::string t = p.text();
        return (p.empty() ? t : "(" + t + ")") + " " + shapeText(p.shape);
    };
    // ", then relu(acc)" for an epilogue after a row op.
    auto then = [&]() { return program.empty() ? std::string() : ", then " + program.text(); };
    auto dims = [&]() {
        if (row.dims == 1)
            return "dim " + std::to_string(row.dim);
        return "dims " + std::to_string(row.dim) + ".." + std::to_string(row.dim + row.dims - 1);
    };
    switch (kind) {
    case PatternKind::Elementwise:
        return "elementwise " + output + " = " + program.text() + " over " + shapeText(outShape);
    case PatternKind::Reduce:
        return reduceOp + " over " + (row.outer * row.inner == 1 ? std::string("all elements") : dims()) + " of " +
            of(input) + (row.keepdim ? " (keepdim)" : "") + then();
    case PatternKind::Softmax:
        return std::string(logSoftmax ? "log_softmax" : "softmax") + " over " + dims() + " of " + of(input) + then();
    case PatternKind::LayerNorm:
    case PatternKind::RMSNorm: {
        std::string s = anchor == "aten::instance_norm" ? "instance_norm of " + of(input)
            : groups > 0 ? anchor.substr(6) + " with " + std::to_string(groups) + " groups of " + of(input)
                         : std::string(kind == PatternKind::LayerNorm ? "layer_norm" : "rms_norm") + " over the last " +
                (row.dims == 1 ? "dim" : std::to_string(row.dims) + " dims") + " of " + of(input);
        char buf[32];
        std::snprintf(buf, sizeof buf, "%g", eps);
        s += std::string(" (eps ") + buf + (weight.empty() ? "" : ", " + weight) + (bias.empty() ? "" : ", " + bias) +
            ")";
        return s + then();
    }
    case PatternKind::Matmul: {
        std::string s;
        for (const auto &g : gemms)
            s += (s.empty() ? "" : ", ") + g.a + (g.transA ? "^T" : "") + " @ " + g.b + (g.transB ? "^T" : "") +
                (g.bias.empty() ? "" : " + " + g.bias) + " (M " + std::to_string(g.m) + ", N " + std::to_string(g.n) +
                ", K " + std::to_string(g.k) + ")";
        return "matrix product " + s + (program.empty() ? "" : ", then " + program.text()) +
            (tail ? ", then " + tail->summary() : "");
    }
    case PatternKind::Conv: {
        if (!conv)
            return "convolution";
        // Per-dim values as one number when they agree ("2"), else "2x1x1".
        auto dims = [&](const std::int64_t *v) {
            std::string s = std::to_string(v[0]);
            if (std::all_of(v, v + conv->dims, [&](std::int64_t e) { return e == v[0]; }))
                return s;
            for (int d = 1; d < conv->dims; ++d)
                s += "x" + std::to_string(v[d]);
            return s;
        };
        const std::int64_t one[3]{1, 1, 1}, zero[3]{0, 0, 0};
        std::string s = conv->op.substr(6) + " of " + conv->x + " with " + conv->weight + " (stride " +
            dims(conv->stride) + ", padding " + dims(conv->pad);
        if (!std::equal(conv->dilation, conv->dilation + conv->dims, one))
            s += ", dilation " + dims(conv->dilation);
        if (!std::equal(conv->outputPad, conv->outputPad + conv->dims, zero))
            s += ", output padding " + dims(conv->outputPad);
        if (conv->groups != 1)
            s += ", groups " + std::to_string(conv->groups);
        if (conv->op == "aten::convolution" || conv->op == "aten::_convolution")
            s += conv->transposed ? ", transposed" : "";
        s += ")" + (conv->bias.empty() ? std::string() : " + " + conv->bias);
        if (!program.empty())
            s += ", then " + program.text();
        if (pool)
            s += ", then " + poolText();
        return s + (tail ? ", then " + tail->summary() : "");
    }
    case PatternKind::Pool:
        return poolText() + " of " + of(input) + then();
    case PatternKind::Normalize:
        return program.text() + " over " + shapeText(program.shape) + ", acc = " + reduceOp + " over " + dims() +
            " of " + of(input);
    case PatternKind::Scan:
        return std::string(reverse ? "reverse " : "") + "cum" + reduceOp + " over " + dims() + " of " + of(input) +
            then();
    }
    return "?";
}

std::string Pattern::poolText() const
{
    if (!pool)
        return "pool";
    const PoolSpec &p = *pool;
    // Per-dim values, outermost first: D (3-D), H (2-D and 3-D), W.
    auto perDim = [&](std::int64_t d, const std::int64_t *hw) {
        std::vector<std::int64_t> v;
        if (p.dims == 3)
            v.push_back(d);
        if (p.dims >= 2)
            v.push_back(hw[0]);
        v.push_back(hw[1]);
        return v;
    };
    std::string kernel;
    for (std::int64_t k : perDim(p.kernelD, p.kernel))
        kernel += (kernel.empty() ? "" : "x") + std::to_string(k);
    const auto stride = perDim(p.strideD, p.stride), pad = perDim(p.padD, p.pad);
    const bool padded = std::any_of(pad.begin(), pad.end(), [](std::int64_t v) { return v != 0; });
    return p.op.substr(6) + " " + kernel + " stride " + std::to_string(stride[0]) +
        (padded ? " padding " + std::to_string(pad[0]) : "");
}

Result<Pattern> recognise(const std::vector<OpNode> &graph, const Problem &problem)
{
    // Stages and tails copy the problem for tensors of their own; its text (a session's carries a
    // module of up to 64 MB in base64) and module are not theirs.
    if (!problem.text.empty() || problem.module) {
        Problem lean = problem;
        lean.text = {};
        lean.module = {};
        return recognise(graph, lean);
    }
    const std::vector<OpNode> nodes = detail::expandComposites(graph, problem);
    if (problem.outputs.size() != 1)
        return makeError(ErrorCode::Unsupported,
                         "the built-in generator writes one output; this problem has " +
                             std::to_string(problem.outputs.size()) + "; use an LLM generator");
    Graph g(nodes, problem);
    if (!g.status())
        return g.status().error();

    auto finish = [&](Result<Pattern> r) -> Result<Pattern> {
        if (!r)
            return r;
        Pattern &p = *r;
        for (const Op &op : g.ops())
            p.ops.push_back(op.name);
        const TensorSpec &out = problem.outputs[0];
        p.output = out.name;
        p.outDtype = out.dtype;
        p.outShape = out.shape;
        // Only an argmax / argmin gives indices; every other kernel writes float32 (a sum of a
        // bool mask, int64 in PyTorch, would be written as floats into an int64 buffer).
        if (out.dtype != DType::F32 && !(p.kind == PatternKind::Reduce && p.reduceOp.rfind("arg", 0) == 0))
            return makeError(ErrorCode::Unsupported,
                             "a result of type " + toString(out.dtype) +
                                 "; the built-in generator writes float32 (and the "
                                 "indices of argmax and argmin)");
        if (numel(g.shape(g.result())) != numel(out.shape))
            return makeError(ErrorCode::Unsupported,
                             "the reference's result has shape " + shapeText(g.shape(g.result())) +
                                 " but the problem declares " + shapeText(out.shape));
        return r;
    };

    std::vector<int> gemms, convs, rows;
    for (int i = 0; i < int(g.ops().size()); ++i) {
        const Op &op = g.ops()[std::size_t(i)];
        const std::string &n = op.name;
        if (n == "aten::matmul" || n == "aten::mm" || n == "aten::bmm" || n == "aten::addmm" || n == "aten::linear" ||
            n == "aten::baddbmm")
            gemms.push_back(i);
        else if (isConvOp(n))
            convs.push_back(i);
        else if (isRowOp(op))
            rows.push_back(i);
        else if (!isAlias(n) && !isElementwiseOp(n) && n != "aten::batch_norm" && n != "aten::flip" &&
                 n != "aten::expand" && n != "aten::expand_as" && !isPositions(op))
            return unsupportedOp(n);
    }
    if (!gemms.empty()) {
        if (!convs.empty())
            return unsupportedOp(g.ops()[std::size_t(convs[0])].name, "together with a matrix product");
        // One product and elementwise ops: one kernel with the ops in its epilogue. Anything more
        // (a row op after it, several products): the products first, then the rest.
        if (gemms.size() == 1 && rows.empty())
            return finish(matchMatmul(g, gemms[0]));
        return finish(matchProducts(g, nodes, gemms));
    }
    if (auto rms = matchRmsNorm(g))
        return finish(*rms);
    if (!convs.empty()) {
        std::vector<int> anchors = convs;
        anchors.insert(anchors.end(), rows.begin(), rows.end());
        std::sort(anchors.begin(), anchors.end());
        auto fused = matchConv(g, anchors);
        // More than a convolution's templates compute (a group norm, a sum after it): the
        // convolution first, then the rest; when that fails too, the first reason stands.
        if (!fused && fused.error().code == ErrorCode::Unsupported)
            if (auto split = matchConvProducts(g, nodes, convs[0]))
                return finish(std::move(split));
        return finish(std::move(fused));
    }
    if (rows.size() > 1)
        return finish(matchRowStages(g, nodes, rows));
    if (rows.size() == 1) {
        auto one = matchRows(g, rows[0]);
        if (!one && one.error().code == ErrorCode::Unsupported)
            if (auto split = matchRowStages(g, nodes, rows))
                return finish(std::move(split));
        return finish(std::move(one));
    }

    if (problem.outputs[0].dtype != DType::F32)
        return makeError(ErrorCode::Unsupported,
                         "an elementwise result of type " + toString(problem.outputs[0].dtype) +
                             " is not handled by the built-in generator");
    ProgramBuilder b(g, problem.outputs[0].shape);
    auto prog = b.build(g.result());
    if (!prog)
        return prog.error();
    Pattern p;
    p.kind = PatternKind::Elementwise;
    p.program = *prog;
    return finish(p);
}

} // namespace kf::builtin
