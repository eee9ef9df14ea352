// Elementwise chains: one fused pass over the output, from plain grid-stride loops to 16-byte
// vector accesses and a persistent grid with streaming cache hints.
#include "gen/builtin/ideas.h"

#include <algorithm>

namespace kf::builtin::ideas {

namespace {

TemplateValues chainValues(const Target &t, Loads loads)
{
    OperandCode c = emitProgram(t.pattern.program, "Chain", loads);
    return {
        {"NUMEL", std::to_string(numel(t.pattern.outShape))},
        {"CHAIN", c.code},
        {"OPERAND_PARAMS", c.params},
        {"OPERAND_ARGS", c.args},
        {"OPERANDS", c.launch},
    };
}

std::int64_t elements(const Target &t) { return numel(t.pattern.outShape); }

} // namespace

void addElementwise(std::vector<IdeaDef> &out)
{
    out.push_back(IdeaDef{
        .id = "ew_grid_stride",
        .title = "Fused elementwise chain, one element per thread",
        .text = "Compute the whole elementwise chain in one pass: each thread reads an element's operands "
                "once, applies every op in registers and writes the result, in a grid-stride loop. No "
                "intermediate tensor goes through memory. The simplest correct kernel, to measure against.",
        .patterns = {PatternKind::Elementwise},
        .space = {{"BLOCK", {256, 128, 512, 1024}, "threads per block"}},
        .repairOrder = {"BLOCK"},
        .estimate =
            [](const Target &t, const Point &p) {
                const int block = p.at("BLOCK");
                const double blocks = double(std::min<std::int64_t>(cdiv(elements(t), block), 1 << 30));
                return Estimate{traffic(t, 1), busy(t, blocks, block), 0.70,
                                "reads every operand with 4-byte loads, one element per thread",
                                gridText(blocks, block)};
            },
        .values =
            [](const Target &t, const Point &p) {
                TemplateValues v = chainValues(t, Loads::ReadOnly);
                v["GRID"] = std::to_string(std::min<std::int64_t>(cdiv(elements(t), p.at("BLOCK")), 1 << 30));
                return v;
            },
    });

    out.push_back(IdeaDef{
        .id = "ew_vec4",
        .title = "16-byte vector loads and stores, several per thread",
        .text = "Move four consecutive elements per access (float4 through the read-only cache) and give each "
                "thread UNROLL such groups per trip, so every warp has several 512-byte loads in flight before "
                "it needs the first. Broadcast operands (a bias) are read per element and stay in L1.",
        .patterns = {PatternKind::Elementwise},
        .needs = {"ew_grid_stride"},
        .space = {{"BLOCK", {256, 512, 128}, "threads per block"},
                  {"UNROLL", {4, 2, 1, 8}, "float4 groups per thread per trip"}},
        .repairOrder = {"UNROLL", "BLOCK"},
        .check = [](const Target &t, const Point &) -> std::string {
            return elements(t) >= 4 ? "" : "fewer than four elements";
        },
        .estimate =
            [](const Target &t, const Point &p) {
                const int block = p.at("BLOCK"), unroll = p.at("UNROLL");
                const double blocks = double(cdiv(elements(t) / 4, std::int64_t(block) * unroll));
                const double eff = unroll == 1 ? 0.86 : unroll == 8 ? 0.88 : 0.89;
                return Estimate{traffic(t, 1), busy(t, blocks, block), eff,
                                "reads every operand with 16-byte loads, " + std::to_string(unroll) +
                                    " per thread in flight",
                                gridText(blocks, block)};
            },
        .values =
            [](const Target &t, const Point &p) {
                TemplateValues v = chainValues(t, Loads::ReadOnly);
                std::int64_t groups = elements(t) / 4, tile = std::int64_t(p.at("BLOCK")) * p.at("UNROLL");
                v["GRID"] = std::to_string(std::clamp<std::int64_t>(cdiv(groups, tile), 1, 1 << 30));
                return v;
            },
    });

    out.push_back(IdeaDef{
        .id = "ew_persistent",
        .title = "Persistent grid with streaming cache hints",
        .text = "Launch exactly as many blocks as the SMs hold at once and let each walk the tensor in strides "
                "of the whole grid, so there is no tail wave and no block launch overhead; load and store with "
                "the evict-first hint (__ldcs/__stcs), because every byte is touched exactly once.",
        .patterns = {PatternKind::Elementwise},
        .needs = {"ew_vec4"},
        .space = {{"BLOCK", {256, 512, 128}, "threads per block"},
                  {"UNROLL", {4, 2, 8}, "float4 groups per thread per trip"},
                  {"BLOCKS_PER_SM", {4, 2, 8}, "resident blocks per SM"}},
        .repairOrder = {"UNROLL", "BLOCKS_PER_SM", "BLOCK"},
        .check = [](const Target &t, const Point &p) -> std::string {
            // Half of an SM's threads: enough loads in flight, and 64 registers per thread.
            if (p.at("BLOCK") * p.at("BLOCKS_PER_SM") > 1024)
                return "more than 1024 threads per SM";
            return elements(t) >= 4 ? "" : "fewer than four elements";
        },
        .estimate =
            [](const Target &t, const Point &p) {
                const int block = p.at("BLOCK"), unroll = p.at("UNROLL");
                const double blocks = double(t.sms) * p.at("BLOCKS_PER_SM");
                const double eff = unroll == 4 ? 0.92 : 0.91;
                return Estimate{traffic(t, 1), busy(t, blocks, block), eff,
                                "streams every operand once with 16-byte evict-first loads", gridText(blocks, block)};
            },
        .values =
            [](const Target &t, const Point &p) {
                TemplateValues v = chainValues(t, Loads::Streaming);
                v["SMS"] = std::to_string(t.sms);
                v["GRID"] = std::to_string(t.sms * p.at("BLOCKS_PER_SM"));
                return v;
            },
    });
}

} // namespace kf::builtin::ideas
