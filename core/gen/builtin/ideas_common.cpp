#include "gen/builtin/ideas.h"

#include <algorithm>
#include <cstdio>

namespace kf::builtin::ideas {

double traffic(const Target &t, double inputReads, double paramReads)
{
    const double minimum = t.inputBytes + t.paramBytes + t.outputBytes;
    if (minimum <= 0)
        return inputReads;
    return (inputReads * t.inputBytes + paramReads * t.paramBytes + t.outputBytes) / minimum;
}

double busy(const Target &t, double blocks, int threadsPerBlock)
{
    return std::min(1.0, blocks * threadsPerBlock / (double(t.sms) * 1024.0));
}

std::string gridText(double blocks, int threadsPerBlock)
{
    char buf[96];
    std::snprintf(buf, sizeof buf, "%.0f blocks of %d threads", blocks, threadsPerBlock);
    return buf;
}

std::string timesText(double reads)
{
    if (reads <= 1.0)
        return "once";
    if (reads <= 2.0)
        return "twice";
    if (reads <= 3.0)
        return "three times";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f times", reads);
    return buf;
}

std::string multipleOf(std::int64_t n, std::int64_t by, const std::string &what)
{
    if (by > 0 && n % by == 0)
        return {};
    return what + " (" + std::to_string(n) + ") is not a multiple of " + std::to_string(by);
}

std::string registersFit(int elems, int block)
{
    // ~32 registers of indices, statistics and addresses besides the row's values; ptxas keeps
    // what fits in 65536 / block registers (at most 255) and spills the rest.
    const int need = elems + 32, limit = std::min(255, 65536 / std::max(block, 1));
    if (need <= limit)
        return {};
    return std::to_string(elems) + " values per thread need about " + std::to_string(need) + " registers; " +
        std::to_string(block) + " threads leave " + std::to_string(limit);
}

std::string holds(std::int64_t span, int threads, int elems)
{
    const std::int64_t capacity = std::int64_t(threads) * elems;
    if (capacity < span)
        return std::to_string(threads) + " threads x " + std::to_string(elems) + " do not hold " + std::to_string(span);
    if (capacity >= 2 * span && elems > 4)
        return "half of the registers would stay empty";
    return registersFit(elems, threads);
}

std::string clusterRowFits(const Target &t, const Point &p)
{
    const int cluster = p.at("CLUSTER");
    if (auto why = multipleOf(t.pattern.row.len, 4 * cluster, "the row length"); !why.empty())
        return why;
    return holds(t.pattern.row.len / cluster, p.at("BLOCK"), p.at("ELEMS"));
}

Estimate clusterRowEstimate(const Target &t, const Point &p, double efficiency)
{
    const int block = p.at("BLOCK"), cluster = p.at("CLUSTER");
    const double blocks = double(t.pattern.row.outer) * cluster;
    const double fill = double(t.pattern.row.len) / (double(cluster) * block * p.at("ELEMS"));
    const double eff = efficiency * std::min(1.0, 0.5 + fill / 2) * inFlight(p.at("ELEMS"), block);
    return Estimate{traffic(t, 1), busy(t, blocks, block), eff,
                    "reads each row once, held in the registers of a " + std::to_string(cluster) + "-block cluster",
                    gridText(blocks, block)};
}

double inFlight(int elems, int block)
{
    const int registers = elems + 32;
    const int blocks = std::max(1, std::min(2048 / block, 65536 / (registers * block)));
    const double bytes = double(blocks) * block * elems * 4;
    return std::min(1.0, bytes / 32768.0);
}

Estimate columnsEstimate(const Target &t, const Point &p, double reads, double vec4Efficiency, const std::string &what)
{
    const int block = p.at("BLOCK"), vec = p.at("VEC");
    const double blocks = double(cdiv(t.pattern.row.outer * t.pattern.row.inner / vec, block));
    return Estimate{traffic(t, reads), busy(t, blocks, block), vec == 4 ? vec4Efficiency : vec4Efficiency - 0.13,
                    what + " columns " + (reads > 1.05 ? timesText(reads) + " " : "") + "with coalesced " +
                        std::to_string(4 * vec) + "-byte loads",
                    gridText(blocks, block)};
}

std::string columnsGrid(const Target &t, const Point &p)
{
    return std::to_string(cdiv(t.pattern.row.outer * t.pattern.row.inner / p.at("VEC"), p.at("BLOCK")));
}

std::int64_t gridSplit(const Target &t, const Point &p)
{
    const std::int64_t rows = t.pattern.row.outer, len = t.pattern.row.len;
    const std::int64_t loads = len >= 4 && (len % 4 == 0 || rows == 1) ? len / 4 : len;
    return std::clamp<std::int64_t>(cdiv(std::int64_t(t.sms) * p.at("BLOCKS_PER_SM"), rows), 1,
                                    std::max<std::int64_t>(loads, 1));
}

std::string doubleLiteral(double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    std::string s = buf;
    if (s.find_first_of(".en") == std::string::npos)
        s += ".0";
    return s;
}

EwProgram outputProgram(const Target &t)
{
    const Pattern &p = t.pattern;
    if (p.kind != PatternKind::LayerNorm && p.kind != PatternKind::RMSNorm)
        return p.program;
    // A norm's affine weight and bias: along the normalized dims, or per channel (dim 1) for
    // GroupNorm and InstanceNorm; then the ops after the norm.
    const Shape &x = p.input.shape;
    EwProgram affine = identityProgram(x);
    for (const std::string &name : {p.weight, p.bias}) {
        if (name.empty())
            continue;
        const TensorSpec *spec = t.problem ? t.problem->tensor(name) : nullptr;
        const Shape shape = spec ? spec->shape : Shape{p.row.len};
        Shape view = shape;
        if (p.groups > 0) {
            view.assign(x.size() > 1 ? x.size() - 1 : 1, 1);
            view[0] = numel(shape);
        }
        affine.leaves.push_back(Leaf{name, shape, view});
        affine.steps.push_back({name == p.weight ? "mul" : "add",
                                {affine.result, EwArg::leaf(int(affine.leaves.size()) - 1)},
                                name == p.weight ? "weight" : "bias"});
        affine.result = EwArg::step(int(affine.steps.size()) - 1);
    }
    return compose(affine, p.program);
}

TemplateValues rowValues(const Target &t, Loads loads, const std::string &held)
{
    const Pattern &p = t.pattern;
    OperandCode in = emitProgram(p.input, "Input", loads, {}, held);
    TemplateValues v{
        {"ROWS", std::to_string(p.row.outer * p.row.inner)},
        {"OUTER", std::to_string(p.row.outer)},
        {"LEN", std::to_string(p.row.len)},
        {"INNER", std::to_string(p.row.inner)},
        {"INPUT", in.code},
        {"IN_PARAMS", in.params},
        {"IN_ARGS", in.args},
        {"IN_LAUNCH", in.launch},
    };
    if (p.kind != PatternKind::Reduce) {
        OperandCode o = emitProgram(outputProgram(t), "Output", loads, in.names, held);
        v["OUTPUT"] = o.code;
        v["OUT_PARAMS"] = o.params.empty() ? "" : ", " + o.params;
        v["OUT_ARGS"] = o.args;
        v["OUT_LAUNCH"] = o.launch.empty() ? "" : ", " + o.launch;
    }
    return v;
}

std::string onlyTensorInPlace(const EwProgram &in)
{
    if (in.leaves.empty())
        return {};
    const std::string x = in.leaves.front().tensor;
    for (const Leaf &leaf : in.leaves)
        if (leaf.tensor != x)
            return {};
    return readsOnlyInPlace(in, x) ? x : std::string();
}

TemplateValues normValues(const Target &t)
{
    const Pattern &p = t.pattern;
    return {
        {"EPS", doubleLiteral(p.eps)},
        {"CENTRE", p.kind == PatternKind::RMSNorm ? "false" : "true"},
    };
}

} // namespace kf::builtin::ideas
