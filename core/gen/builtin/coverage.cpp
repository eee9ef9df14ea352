#include "gen/builtin/coverage.h"

#include "gen/builtin/catalogue.h"
#include "gen/builtin/ew_ops.h"
#include "gen/builtin/pattern.h"

#include <regex>

namespace kf::builtin {

const std::vector<CoverageGroup> &coverageGroups()
{
    // The anchors are those recognise() (pattern.cpp) routes to each matcher; keep them in step.
    static const std::vector<CoverageGroup> groups = [] {
        std::vector<CoverageGroup> g;
        g.push_back({"elementwise", elementwiseOps(),
                     "chains of these ops with numpy broadcasting, fused into one pass; also the epilogue of every "
                     "other pattern; views (aten::view, reshape, flatten, unsqueeze, squeeze, contiguous, t, "
                     "transpose, permute) are followed; float32 results"});
        g.push_back({"reduction", {"aten::sum", "aten::mean", "aten::amax", "aten::amin", "aten::max", "aten::min",
                                   "aten::argmax", "aten::argmin"},
                     "along one dim or adjacent dims, rows or columns, keepdim or not, after an elementwise prologue; "
                     "max/min along a dim return values or indices"});
        g.push_back({"softmax", {"aten::softmax", "aten::log_softmax", "aten::_softmax", "aten::_log_softmax"},
                     "along one dim, after an elementwise prologue; no dtype conversion"});
        g.push_back({"layernorm", {"aten::layer_norm"},
                     "over the last dims, with constant eps and the problem's weight and bias (or none)"});
        g.push_back({"rmsnorm", {"aten::rms_norm", "aten::mean", "aten::rsqrt", "aten::sqrt"},
                     "aten::rms_norm, or x * rsqrt(mean(x^2, -1, keepdim) + eps) [* weight] (x / sqrt(...) too) "
                     "over the last dim"});
        g.push_back({"matmul", {"aten::matmul", "aten::mm", "aten::bmm", "aten::linear", "aten::addmm", "aten::baddbmm"},
                     "one product of problem tensors (transposed views too) with a bias and an elementwise epilogue "
                     "(inference batch_norm folds into it); a softmax after the product, or several products "
                     "sharing an epilogue (SwiGLU), are recognised but no template computes them yet"});
        g.push_back({"conv2d", {"aten::conv2d", "aten::batch_norm", "aten::max_pool2d", "aten::avg_pool2d"},
                     "groups 1, dilation 1, numeric padding, with a bias, an elementwise epilogue (inference "
                     "batch_norm folds into it) and optionally one pooling after it"});
        g.push_back({"pooling", {"aten::max_pool2d", "aten::avg_pool2d"},
                     "recognised alone, but the catalogue has no pooling idea yet", false});
        return g;
    }();
    return groups;
}

namespace {

// The first aten:: or prim:: name in a message ("the built-in generator cannot implement
// aten::cumsum; ...").
std::string firstOp(const std::string &text)
{
    static const std::regex op(R"((aten|prim)::[A-Za-z0-9_]+)");
    std::smatch m;
    return std::regex_search(text, m, op) ? m.str() : std::string();
}

} // namespace

ProblemCoverage coverageOf(const std::vector<OpNode> &graph, const Problem &problem, Policy policy, int sms, int major)
{
    ProblemCoverage c;
    auto pattern = recognise(graph, problem);
    if (!pattern) {
        c.reason = pattern.error().message;
        c.stoppedBy = firstOp(c.reason);
        return c;
    }
    c.pattern = toString(pattern->kind);
    c.summary = pattern->summary();
    const Target t = makeTarget(*pattern, problem, sms, major, policy);
    std::string reasons;
    bool any = false;
    for (const IdeaDef &d : catalogue()) {
        if (!d.forKind(t.pattern.kind))
            continue;
        any = true;
        const std::string why = d.whyNot(t);
        if (why.empty()) {
            c.covered = true;
            return c;
        }
        reasons += (reasons.empty() ? "" : "; ") + d.id + ": " + why;
    }
    // A row op after a product (softmax of attention scores) is what the templates do not fuse.
    c.stoppedBy = pattern->rowOpAfter.empty() ? pattern->anchor : pattern->rowOpAfter;
    c.reason = any ? "no built-in idea fits (" + reasons + ")"
                   : "the catalogue has no idea for " + c.pattern + " yet (" +
                         (pattern->anchor.empty() ? std::string("elementwise ops") : pattern->anchor) + ")";
    return c;
}

} // namespace kf::builtin
