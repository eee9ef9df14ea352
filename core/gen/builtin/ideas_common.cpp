#include "gen/builtin/ideas.h"

#include <algorithm>
#include <cstdio>

namespace kf::builtin::ideas {

double traffic(const Target &t, double inputReads, double paramReads)
{
    const double minimum = t.inputBytes + t.paramBytes + t.outputBytes;
    if (minimum <= 0) return inputReads;
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
    if (reads <= 1.0) return "once";
    if (reads <= 2.0) return "twice";
    if (reads <= 3.0) return "three times";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f times", reads);
    return buf;
}

std::string multipleOf(std::int64_t n, std::int64_t by, const std::string &what)
{
    if (by > 0 && n % by == 0) return {};
    return what + " (" + std::to_string(n) + ") is not a multiple of " + std::to_string(by);
}

std::string registersFit(int elems, int block)
{
    // ~32 registers of indices, statistics and addresses besides the row's values; ptxas keeps
    // what fits in 65536 / block registers (at most 255) and spills the rest.
    const int need = elems + 32, limit = std::min(255, 65536 / std::max(block, 1));
    if (need <= limit) return {};
    return std::to_string(elems) + " values per thread need about " + std::to_string(need) +
           " registers; " + std::to_string(block) + " threads leave " + std::to_string(limit);
}

double inFlight(int elems, int block)
{
    const int registers = elems + 32;
    const int blocks = std::max(1, std::min(2048 / block, 65536 / (registers * block)));
    const double bytes = double(blocks) * block * elems * 4;
    return std::min(1.0, bytes / 32768.0);
}

std::string doubleLiteral(double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    std::string s = buf;
    if (s.find_first_of(".en") == std::string::npos) s += ".0";
    return s;
}

TemplateValues rowValues(const Target &t, Loads loads)
{
    const Pattern &p = t.pattern;
    OperandCode in = emitProgram(p.input, "Input", loads);
    return {
        {"ROWS", std::to_string(p.row.outer * p.row.inner)},
        {"OUTER", std::to_string(p.row.outer)},
        {"LEN", std::to_string(p.row.len)},
        {"INNER", std::to_string(p.row.inner)},
        {"INPUT", in.code},
        {"IN_PARAMS", in.params},
        {"IN_ARGS", in.args},
        {"IN_LAUNCH", in.launch},
    };
}

TemplateValues normValues(const Target &t)
{
    const Pattern &p = t.pattern;
    AffineCode a = emitAffine(p);
    return {
        {"EPS", doubleLiteral(p.eps)},
        {"CENTRE", p.kind == PatternKind::RMSNorm ? "false" : "true"},
        {"AFFINE", a.code},
        {"AFFINE_PARAMS", a.params},
        {"AFFINE_ARGS", a.args},
        {"AFFINE_LAUNCH", a.launch},
    };
}

} // namespace kf::builtin::ideas
