// 1-, 2- and 3-D max and average pooling, alone or with elementwise ops before it (read through
// Input) and after it (applied by Output): a thread per few adjacent outputs of a row, or, for
// windows of many taps, a warp per window. A 1-D window is a 2-D one of height 1, a 2-D one a 3-D
// one of depth 1.
#include "gen/builtin/ideas.h"

#include <algorithm>
#include <climits>
#include <cmath>

namespace kf::builtin::ideas {

namespace {

struct Pool {
    std::int64_t planes = 0, d = 1, h = 1, w = 0, od = 1, oh = 1, ow = 0;
};

std::string poolOf(const Target &t, Pool &out)
{
    const Pattern &p = t.pattern;
    if (!p.pool)
        return "the pattern has no pooling";
    const Shape &x = p.input.shape;
    const std::size_t dims = std::size_t(p.pool->dims);
    if (x.size() < dims + 1)
        return "pooling of a tensor of rank " + std::to_string(x.size());
    const Shape &o = p.pool->outShape;
    if (o.size() != x.size())
        return "the pooled shape does not match the input's rank";
    auto at = [&](const Shape &s, std::size_t fromEnd) { return fromEnd <= dims ? s[s.size() - fromEnd] : 1; };
    out.d = at(x, 3), out.h = at(x, 2), out.w = at(x, 1);
    out.od = at(o, 3), out.oh = at(o, 2), out.ow = at(o, 1);
    out.planes = numel(x) / std::max<std::int64_t>(out.d * out.h * out.w, 1);
    if (out.d >= INT_MAX / 2 || out.h >= INT_MAX / 2 || out.w >= INT_MAX / 2)
        return "a plane dim does not fit an int";
    if (p.outDtype != DType::F32)
        return "the result is " + toString(p.outDtype) + ", not float32";
    return {};
}

Pool pool(const Target &t)
{
    Pool p;
    poolOf(t, p);
    return p;
}

std::int64_t slots(const Target &t, int outs)
{
    const Pool p = pool(t);
    return p.planes * p.od * p.oh * cdiv(p.ow, outs);
}

// The geometry both templates read; GRID is the caller's.
TemplateValues poolValues(const Target &t)
{
    TemplateValues v = rowValues(t);
    const Pool g = pool(t);
    const PoolSpec &s = *t.pattern.pool;
    v["PLANES"] = std::to_string(g.planes);
    v["IN_D"] = std::to_string(g.d), v["OUT_D"] = std::to_string(g.od);
    v["KD"] = std::to_string(s.kernelD), v["STRIDE_D"] = std::to_string(s.strideD);
    v["PAD_D"] = std::to_string(s.padD), v["DIL_D"] = std::to_string(s.dilationD);
    v["IN_H"] = std::to_string(g.h), v["IN_W"] = std::to_string(g.w);
    v["OUT_H"] = std::to_string(g.oh), v["OUT_W"] = std::to_string(g.ow);
    v["KH"] = std::to_string(s.kernel[0]), v["KW"] = std::to_string(s.kernel[1]);
    v["STRIDE_H"] = std::to_string(s.stride[0]), v["STRIDE_W"] = std::to_string(s.stride[1]);
    v["PAD_H"] = std::to_string(s.pad[0]), v["PAD_W"] = std::to_string(s.pad[1]);
    v["DIL_H"] = std::to_string(s.dilation[0]), v["DIL_W"] = std::to_string(s.dilation[1]);
    v["MAX"] = s.max ? "true" : "false";
    v["COUNT_PAD"] = s.countIncludePad ? "true" : "false";
    v["DIVISOR"] = std::to_string(s.divisor);
    return v;
}

std::int64_t windowTaps(const Target &t)
{
    const PoolSpec &s = *t.pattern.pool;
    return s.kernelD * s.kernel[0] * s.kernel[1];
}

// pool2d_window's and pool_row_span's grid: a thread per `outs` adjacent outputs of a row. Input
// rows that overlapping windows share along the height are read again; L1 and L2 serve most of that.
Estimate slotEstimate(const Target &t, int outs, int block, double efficiency, const std::string &reads)
{
    const PoolSpec &s = *t.pattern.pool;
    const double overlap = std::max(1.0, double(s.kernel[0]) / double(std::max<std::int64_t>(s.stride[0], 1)));
    const double blocks = double(cdiv(slots(t, outs), block));
    return Estimate{traffic(t, 1 + 0.1 * (overlap - 1)), busy(t, blocks, block), efficiency,
                    reads + ", " + std::to_string(outs) + " outputs per thread", gridText(blocks, block)};
}

TemplateValues slotValues(const Target &t, int outs, int block)
{
    TemplateValues v = poolValues(t);
    v["GRID"] = std::to_string(std::clamp<std::int64_t>(cdiv(slots(t, outs), block), 1, INT_MAX));
    return v;
}

// The registers pool_row_span loads per window row for `outs` outputs (its kLoaded).
int spanValues(const Target &t, int outs)
{
    const PoolSpec &s = *t.pattern.pool;
    const std::int64_t span = (outs - 1) * s.stride[1] + (s.kernel[1] - 1) * s.dilation[1] + 1;
    const bool load4 = pool(t).w % 4 == 0 && (outs * s.stride[1]) % 4 == 0;
    const std::int64_t lead = load4 ? (4 - s.pad[1] % 4) % 4 : 0;
    return int(std::min<std::int64_t>(load4 ? (lead + span + 3) / 4 * 4 : span, INT_MAX));
}
constexpr int kMaxSpan = 64;

} // namespace

void addPool(std::vector<IdeaDef> &out)
{
    out.push_back(IdeaDef{
        .id = "pool2d_window",
        .title = "Pooling windows, a few adjacent outputs per thread",
        .text = "Give each thread OUTS adjacent outputs of one output row: it walks each output's window "
                "(dilation, padding and ceil mode as PyTorch has them), keeping the maximum or the sum, and "
                "divides an average by the window's size as PyTorch counts it. Consecutive threads take "
                "consecutive outputs, so a warp's loads of one input row share cache lines and L1 serves the "
                "windows' overlap; any elementwise ops before or after the pooling are applied on the way, "
                "with no tensor in between.",
        .patterns = {PatternKind::Pool},
        .space = {{"OUTS", {2, 1, 4}, "adjacent outputs per thread"}, {"BLOCK", {256, 128, 512}, "threads per block"}},
        .repairOrder = {"OUTS", "BLOCK"},
        .applies =
            [](const Target &t) {
                Pool p;
                return poolOf(t, p);
            },
        .check = [](const Target &t, const Point &p) -> std::string {
            if (p.at("OUTS") > 1 && pool(t).ow < p.at("OUTS"))
                return "output rows are shorter than OUTS";
            return {};
        },
        .estimate =
            [](const Target &t, const Point &p) {
                const int outs = p.at("OUTS");
                return slotEstimate(t, outs, p.at("BLOCK"),
                                    outs == 1       ? 0.7
                                        : outs == 2 ? 0.78
                                                    : 0.74,
                                    "reads each input row once per window row it falls in");
            },
        .values = [](const Target &t, const Point &p) { return slotValues(t, p.at("OUTS"), p.at("BLOCK")); },
    });

    out.push_back(IdeaDef{
        .id = "pool_row_span",
        .title = "Pooling rows from a span held in registers",
        .text = "Give each thread OUTS adjacent outputs of one output row and, for each window row, load the span of "
                "input those outputs read into registers once (16-byte loads where the spans start on 16-byte "
                "boundaries), with the padding loaded as a value that changes nothing; every output takes its taps "
                "from the registers, so an input is read once per window row instead of once per window it falls "
                "in. The warp writes its outputs, one contiguous run, through shared memory, so each store covers "
                "whole lines; elementwise ops before or after the pooling are applied on the way.",
        .patterns = {PatternKind::Pool},
        .needs = {"pool2d_window"},
        .space = {{"OUTS", {8, 16, 4}, "adjacent outputs per thread"}, {"BLOCK", {256, 128}, "threads per block"}},
        .repairOrder = {"OUTS", "BLOCK"},
        .applies = [](const Target &t) -> std::string {
            Pool p;
            if (auto why = poolOf(t, p); !why.empty())
                return why;
            if (spanValues(t, 4) > kMaxSpan)
                return "a window row of " + std::to_string(spanValues(t, 4)) +
                    " inputs for 4 outputs (registers hold " + std::to_string(kMaxSpan) + ")";
            return {};
        },
        .check = [](const Target &t, const Point &p) -> std::string {
            if (p.at("OUTS") > 4 && pool(t).ow < p.at("OUTS"))
                return "output rows are shorter than OUTS";
            if (spanValues(t, p.at("OUTS")) > kMaxSpan)
                return "the span of " + std::to_string(p.at("OUTS")) + " outputs needs " +
                    std::to_string(spanValues(t, p.at("OUTS"))) + " registers (at most " + std::to_string(kMaxSpan) +
                    ")";
            return {};
        },
        .estimate =
            [](const Target &t, const Point &p) {
                return slotEstimate(t, p.at("OUTS"), p.at("BLOCK"), 0.85, "reads each input once per window row");
            },
        .values = [](const Target &t, const Point &p) { return slotValues(t, p.at("OUTS"), p.at("BLOCK")); },
    });

    out.push_back(IdeaDef{
        .id = "pool_window_warp",
        .title = "Pooling windows of many taps, a warp per window",
        .text = "Give each output window a warp: the lanes take the window's taps in turn, so a warp reads 32 "
                "consecutive inputs of a window row (whole cache lines) where a thread per output would read 32 "
                "windows a window's width apart. Each lane keeps the maximum or the sum of its taps, the warp "
                "merges them by shuffles, and lane 0 divides an average by the window's size as PyTorch counts it "
                "and writes the output; elementwise ops before or after the pooling are applied on the way.",
        .patterns = {PatternKind::Pool},
        .needs = {"pool2d_window"},
        .space = {{"BLOCK", {256, 128, 512}, "threads per block (8 warps: 8 windows at a time)"}},
        .repairOrder = {"BLOCK"},
        .applies = [](const Target &t) -> std::string {
            Pool p;
            if (auto why = poolOf(t, p); !why.empty())
                return why;
            // Narrow or small windows leave lanes idle and spread a warp's loads over many rows:
            // on the H200, 6x6 windows took 5x pool2d_window's time, 8x12 windows half of it.
            const std::int64_t taps = windowTaps(t), width = t.pattern.pool->kernel[1];
            if (taps < 64 || width < 12)
                return "a window of " + std::to_string(taps) + " taps, " + std::to_string(width) +
                    " wide (a warp per window needs at least 64 taps in rows of 12)";
            return {};
        },
        .estimate =
            [](const Target &t, const Point &p) {
                const int block = p.at("BLOCK");
                const Pool g = pool(t);
                const double windows = double(g.planes) * double(g.od * g.oh * g.ow);
                const double blocks = std::min(double(INT_MAX), std::ceil(windows / (block / 32)));
                return Estimate{traffic(t, 1.0), busy(t, blocks, block), 0.85,
                                "reads each window's rows as whole cache lines, a warp per window",
                                gridText(blocks, block)};
            },
        .values =
            [](const Target &t, const Point &p) {
                TemplateValues v = poolValues(t);
                const Pool g = pool(t);
                const std::int64_t windows = g.planes * g.od * g.oh * g.ow;
                v["GRID"] = std::to_string(std::clamp<std::int64_t>(cdiv(windows, p.at("BLOCK") / 32), 1, INT_MAX));
                return v;
            },
    });
}

} // namespace kf::builtin::ideas
