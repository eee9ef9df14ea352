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
                     "transpose, permute) are followed; float32 results; bool tensors read as 1 or 0, int64 "
                     "tensors as the floats they equal; comparisons (eq, ne, gt, ge, lt, le) give 1 or 0, where and "
                     "masked_fill choose by them; triu "
                     "and tril as a mask of each element's row and column; arange(n) as each element's place"});
        g.push_back(
            {"reduction",
             {"aten::sum",
              "aten::mean",
              "aten::prod",
              "aten::amax",
              "aten::amin",
              "aten::max",
              "aten::min",
              "aten::argmax",
              "aten::argmin",
              "aten::logsumexp",
              "aten::norm",
              "aten::linalg_vector_norm",
              "aten::frobenius_norm",
              "aten::mse_loss",
              "aten::l1_loss",
              "aten::smooth_l1_loss",
              "aten::huber_loss",
              "aten::kl_div",
              "aten::soft_margin_loss",
              "aten::cosine_similarity",
              "aten::pairwise_distance",
              "aten::triplet_margin_loss",
              "aten::cross_entropy_loss"},
             "along one dim or adjacent dims, rows or columns, or over every element (to a scalar: a sum, a "
             "mean, a loss with reduction mean or sum, a vector norm of order 1, 2 or inf), keepdim or not, "
             "after an elementwise prologue and before elementwise ops that read no other tensor; max/min "
             "along a dim return values or indices; sums accumulate in double; logsumexp keeps a running "
             "maximum and a double sum of exp(x - max) in one pass; cosine similarity, pairwise distances and the "
             "triplet margin loss are written as row norms and sums (computed in one pass over the rows, or a "
             "stage each) and what combines them; cross entropy of scores [N, C] against int64 class indices "
             "(no class weights or label smoothing; ignore_index honoured) as a logsumexp of each row and a "
             "sum that picks the target's score, in the same pass; the functional losses' broadcast_tensors "
             "become expands"});
        g.push_back({"normalize",
                     {"aten::sum", "aten::mean", "aten::amax", "aten::amin", "aten::logsumexp", "aten::norm",
                      "aten::linalg_vector_norm", "aten::frobenius_norm", "aten::expand_as", "aten::expand"},
                     "elementwise ops around one reduction whose result is broadcast back over the reduced dims "
                     "(keepdim, or unsqueezed): x / sum(|x|, dim), x / ||x||, x * rsqrt(mean(x^2, dim) + eps) over "
                     "any dim, a tensor divided by its norm, x - logsumexp(x, dim)"});
        g.push_back({"softmax",
                     {"aten::softmax", "aten::log_softmax", "aten::_softmax", "aten::_log_softmax"},
                     "along any dim (the last: rows; another: down the columns), after an elementwise prologue and "
                     "before elementwise ops; no dtype conversion"});
        g.push_back({"layernorm",
                     {"aten::layer_norm", "aten::group_norm", "aten::instance_norm"},
                     "over the last dims (layer_norm) or over each sample's groups of channels (group_norm, "
                     "instance_norm with batch statistics), with constant eps, the problem's weight and bias (or "
                     "none) and elementwise ops after it"});
        g.push_back({"rmsnorm",
                     {"aten::rms_norm", "aten::mean", "aten::rsqrt", "aten::sqrt"},
                     "aten::rms_norm, or x * rsqrt(mean(x^2, -1, keepdim) + eps) [* weight] (x / sqrt(...) too) "
                     "over the last dim (other dims: the normalize pattern)"});
        g.push_back({"matmul",
                     {"aten::matmul", "aten::mm", "aten::bmm", "aten::linear", "aten::addmm", "aten::baddbmm",
                      "aten::einsum", "aten::diag"},
                     "one product of problem tensors (transposed views too; an einsum of two operands that sums one "
                     "index; diag(v) @ B as a broadcast product) with a bias and an elementwise epilogue "
                     "(inference batch_norm folds into it), batched or not; products with at most 16 rows or columns "
                     "(matrix-vector) are streamed with split K, and a long K under a small output is split across "
                     "blocks on the tensor cores; after a row op on the product (a softmax, sum, max or norm of "
                     "each row) or with several products sharing an epilogue (SwiGLU), each product is written "
                     "to a scratch buffer and what follows is generated as a problem of its own over them"});
        g.push_back({"conv",
                     {"aten::conv1d", "aten::conv2d", "aten::conv3d", "aten::conv_transpose1d", "aten::conv_transpose2d",
                      "aten::conv_transpose3d", "aten::convolution", "aten::_convolution", "aten::batch_norm",
                      "aten::max_pool2d", "aten::avg_pool2d"},
                     "1-, 2- and 3-D convolutions and their transposes, any stride, padding (numeric, 'same', "
                     "'valid'), dilation, output padding and groups (depthwise too), with a bias and an elementwise "
                     "epilogue (inference batch_norm folds into it); a 2-D convolution may have one max or average "
                     "pooling after it (in a pass of its own, or for max pooling in the implicit GEMM's tiles). A "
                     "conv2d of groups 1 and dilation 1 runs on the tensor cores (implicit GEMM, wgmma), the rest "
                     "directly in fp32. Followed by another pattern (a group norm, a sum, a 3-D pooling, another "
                     "convolution), the convolution is written to a scratch buffer and the rest generated as a "
                     "problem of its own"});
        g.push_back({"pooling",
                     {"aten::max_pool1d", "aten::max_pool2d", "aten::max_pool3d", "aten::avg_pool1d",
                      "aten::avg_pool2d", "aten::avg_pool3d", "aten::adaptive_avg_pool1d", "aten::adaptive_avg_pool2d",
                      "aten::adaptive_avg_pool3d"},
                     "1-, 2- and 3-D max and average pooling with any window, stride, padding, dilation and ceil "
                     "mode (count_include_pad and divisor_override as PyTorch has them), after an elementwise "
                     "prologue and before elementwise ops; adaptive average pooling to one value per plane (a "
                     "mean, as a reduction) or to sizes that divide the input's"});
        g.push_back({"scan",
                     {"aten::cumsum", "aten::cumprod", "aten::flip"},
                     "cumulative sums and products along one dim, from its end between two flips of that dim, "
                     "after an elementwise prologue and before elementwise ops; running values in double"});
        g.push_back({"chains", {},
                     "several row ops in a row (a group norm then a min, a min then a softmax, a sum then a "
                     "logsumexp), after a product or a convolution or alone: the first row op, with the elementwise "
                     "ops that alone read its result, writes a scratch buffer, and the rest is generated as a "
                     "problem of its own over it, stage after stage"});
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

Result<std::vector<RenderedCandidate>> renderCandidates(const std::vector<OpNode> &graph, const Problem &problem,
                                                        Policy policy, int points, int sms, int major)
{
    auto pattern = recognise(graph, problem);
    if (!pattern)
        return pattern.error();
    const Target t = makeTarget(*pattern, problem, sms, major, policy);
    std::vector<RenderedCandidate> out;
    for (const IdeaDef &d : catalogue()) {
        if (!d.whyNot(t).empty())
            continue;
        const std::vector<Point> valid = validPoints(d, t);
        for (std::size_t i = 0; i < valid.size() && int(i) < points; ++i) {
            auto source = renderIdea(d, t, valid[i]);
            if (!source)
                return source.error();
            out.push_back(
                {d.id, pointText(valid[i]), d.id + (i ? "_" + std::to_string(i + 1) : std::string()) + ".cu", *source});
        }
    }
    return out;
}

nlohmann::json problemJson(const Problem &p)
{
    auto tensor = [](const TensorSpec &t) {
        return nlohmann::json{{"name", t.name}, {"shape", t.shape}, {"dtype", toString(t.dtype)}};
    };
    nlohmann::json j{{"name", p.name}, {"policy", toString(p.policy)}, {"source", p.referenceSource}};
    j["inputs"] = nlohmann::json::array();
    for (const InputSpec &in : p.inputs) {
        nlohmann::json t = tensor(in);
        t["init"] = in.distributions.empty() ? "uniform" : toString(in.distributions.front());
        j["inputs"].push_back(t);
    }
    j["params"] = nlohmann::json::array();
    for (const ParamSpec &par : p.params) {
        nlohmann::json t = tensor(par);
        t["init"] = par.init;
        t["low"] = par.low, t["high"] = par.high, t["fan_in"] = par.fanIn;
        j["params"].push_back(t);
    }
    j["outputs"] = nlohmann::json::array();
    for (const TensorSpec &o : p.outputs)
        j["outputs"].push_back(tensor(o));
    return j;
}

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
    c.stoppedBy = pattern->anchor;
    c.reason = any ? "no built-in idea fits (" + reasons + ")"
                   : "the catalogue has no idea for " + c.pattern + " yet (" +
            (pattern->anchor.empty() ? std::string("elementwise ops") : pattern->anchor) + ")";
    return c;
}

} // namespace kf::builtin
