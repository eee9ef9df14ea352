// Reductions along one dim (sum, mean, amax/amin, argmax/argmin): a thread per output, then a
// block or a warp per row with shuffle trees, long rows split across blocks, and column
// reductions (the reduced dim is not the last) with vector loads and slices of the reduced dim.
#include "gen/builtin/ideas.h"

#include <algorithm>

namespace kf::builtin::ideas {

namespace {

std::int64_t rows(const Target &t) { return t.pattern.row.outer; }
std::int64_t len(const Target &t) { return t.pattern.row.len; }
std::int64_t outputs(const Target &t) { return t.pattern.row.outer * t.pattern.row.inner; }

std::string lastDimOnly(const Target &t)
{
    return t.pattern.row.inner == 1 ? "" : "the reduced dim is not the last (a column reduction)";
}

// A block or a warp per row: fewer rows than SMs leave most of the GPU idle (a loss would run on
// one block); reduce_split_row and reduce_grid spread them instead.
std::string rowsFillTheGpu(const Target &t)
{
    if (auto why = lastDimOnly(t); !why.empty())
        return why;
    return rows(t) >= t.sms ? "" : std::to_string(rows(t)) + " rows would leave most SMs idle";
}

std::string notLastDim(const Target &t)
{
    return t.pattern.row.inner > 1 ? "" : "the reduced dim is the last (a row reduction)";
}

std::string vecFits(const Point &p, std::int64_t n, const std::string &what)
{
    return p.at("VEC") == 4 ? multipleOf(n, 4, what) : std::string();
}

// Threads that find no work in a row of `perThreadGroups` loads spread over `threads` threads.
double idle(double groups, double threads) { return std::clamp(groups / threads, 0.05, 1.0); }

TemplateValues reduceValues(const Target &t)
{
    TemplateValues v = rowValues(t);
    v["REDUCTION"] = emitReduction(t.pattern);
    return v;
}

} // namespace

void addReduce(std::vector<IdeaDef> &out)
{
    out.push_back(IdeaDef{
        .id = "reduce_thread_per_output",
        .title = "One thread per output element",
        .text = "Give every output element its own thread, which walks the reduced dim and combines as it "
                "goes (sums in double). Simple and correct for any dim; loads coalesce when the reduced dim is "
                "not the last, and scatter when it is.",
        .patterns = {PatternKind::Reduce},
        .space = {{"BLOCK", {256, 128, 512}, "threads per block"}},
        .repairOrder = {"BLOCK"},
        .applies = [](const Target &t) -> std::string {
            if (outputs(t) < t.sms)
                return std::to_string(outputs(t)) + " outputs would keep fewer threads busy than the GPU has SMs";
            return {};
        },
        .estimate =
            [](const Target &t, const Point &p) {
                const int block = p.at("BLOCK");
                const double blocks = double(cdiv(outputs(t), block));
                const bool rowsOfOwn = t.pattern.row.inner == 1;
                return Estimate{traffic(t, 1), busy(t, blocks, block), rowsOfOwn ? 0.12 : 0.72,
                                rowsOfOwn ? "has each thread walk its own row, so a warp's loads touch 32 rows"
                                          : "reads columns with coalesced 4-byte loads, one output per thread",
                                gridText(blocks, block)};
            },
        .values =
            [](const Target &t, const Point &p) {
                TemplateValues v = reduceValues(t);
                v["GRID"] = std::to_string(cdiv(outputs(t), p.at("BLOCK")));
                return v;
            },
    });

    out.push_back(IdeaDef{
        .id = "reduce_block_per_row",
        .title = "Block per row with warp-shuffle and shared-memory reduction",
        .text = "Give each row to a block: its threads stride over the row with coalesced (VEC-wide) loads, "
                "keep one partial each, and combine them with a warp-shuffle tree and one exchange through "
                "shared memory. Every load is used in full, and sums round like a tree, not a chain.",
        .patterns = {PatternKind::Reduce},
        .needs = {"reduce_thread_per_output"},
        .space = {{"BLOCK", {256, 512, 128, 1024}, "threads per block"}, {"VEC", {4, 1}, "floats per load"}},
        .repairOrder = {"VEC", "BLOCK"},
        .applies = rowsFillTheGpu,
        .check = [](const Target &t, const Point &p) { return vecFits(p, len(t), "the row length"); },
        .estimate =
            [](const Target &t, const Point &p) {
                const int block = p.at("BLOCK"), vec = p.at("VEC");
                const double eff = (vec == 4 ? 0.88 : 0.74) * idle(double(len(t)) / vec, block);
                return Estimate{traffic(t, 1), busy(t, double(rows(t)), block), eff,
                                "reads each row once, coalesced, a block per row", gridText(double(rows(t)), block)};
            },
        .values =
            [](const Target &t, const Point &) {
                TemplateValues v = reduceValues(t);
                v["GRID"] = std::to_string(rows(t));
                return v;
            },
    });

    out.push_back(IdeaDef{
        .id = "reduce_warp_per_row",
        .title = "Warp per row, several rows per block",
        .text = "Give each row to one warp (WARPS rows per block): for rows of a few thousand elements a "
                "whole block per row spends its last steps mostly idle and synchronizing; a warp reduces with "
                "five shuffles and no shared memory or __syncthreads.",
        .patterns = {PatternKind::Reduce},
        .needs = {"reduce_thread_per_output"},
        .space = {{"WARPS", {8, 4, 16}, "warps (rows) per block"}, {"VEC", {4, 1}, "floats per load"}},
        .repairOrder = {"VEC", "WARPS"},
        .applies = rowsFillTheGpu,
        .check = [](const Target &t, const Point &p) { return vecFits(p, len(t), "the row length"); },
        .estimate =
            [](const Target &t, const Point &p) {
                const int warps = p.at("WARPS"), vec = p.at("VEC");
                const double blocks = double(cdiv(rows(t), warps));
                const double eff = (vec == 4 ? 0.89 : 0.75) * idle(double(len(t)) / vec, 32);
                return Estimate{traffic(t, 1), busy(t, blocks, 32 * warps), eff,
                                "reads each row once, coalesced, a warp per row", gridText(blocks, 32 * warps)};
            },
        .values =
            [](const Target &t, const Point &p) {
                TemplateValues v = reduceValues(t);
                v["GRID"] = std::to_string(cdiv(rows(t), p.at("WARPS")));
                v["THREADS"] = std::to_string(32 * p.at("WARPS"));
                return v;
            },
    });

    out.push_back(IdeaDef{
        .id = "reduce_split_row",
        .title = "Split each long row across several blocks",
        .text = "When there are fewer rows than the GPU has SMs to keep busy, cut each row into SPLIT chunks "
                "reduced by different blocks into partials in a scratch buffer, then combine each row's "
                "partials with one warp in a second, tiny kernel.",
        .patterns = {PatternKind::Reduce},
        .needs = {"reduce_block_per_row"},
        .space = {{"BLOCK", {256, 512}, "threads per block"},
                  {"SPLIT", {8, 16, 4, 32, 2, 64}, "blocks per row"},
                  {"VEC", {4, 1}, "floats per load"}},
        .repairOrder = {"VEC", "SPLIT", "BLOCK"},
        .applies = [](const Target &t) -> std::string {
            if (auto why = lastDimOnly(t); !why.empty())
                return why;
            return rows(t) < 2 * t.sms ? "" : "there are enough rows to fill the GPU";
        },
        .check =
            [](const Target &t, const Point &p) {
                return multipleOf(len(t), std::int64_t(p.at("SPLIT")) * p.at("VEC"), "the row length");
            },
        .estimate =
            [](const Target &t, const Point &p) {
                const int block = p.at("BLOCK"), vec = p.at("VEC");
                const double blocks = double(rows(t)) * p.at("SPLIT");
                const double eff = (vec == 4 ? 0.86 : 0.72) * idle(double(len(t)) / p.at("SPLIT") / vec, block);
                return Estimate{traffic(t, 1), busy(t, blocks, block), eff,
                                "reads each row once, " + std::to_string(p.at("SPLIT")) + " blocks per row",
                                gridText(blocks, block)};
            },
        .values =
            [](const Target &t, const Point &p) {
                TemplateValues v = reduceValues(t);
                v["GRID"] = std::to_string(rows(t) * p.at("SPLIT"));
                v["COMBINE_GRID"] = std::to_string(cdiv(rows(t), p.at("BLOCK") / 32));
                v["PARTIAL_WORDS"] = std::to_string(rows(t) * p.at("SPLIT") * 2);
                return v;
            },
    });

    out.push_back(IdeaDef{
        .id = "reduce_grid",
        .title = "Whole-GPU two-stage reduction, same result every run",
        .text = "For few outputs of long rows (a tensor reduced to one value, a loss): spread every row over "
                "as many blocks as keep the GPU busy, each thread with its own accumulator (double for sums, so "
                "10^9 values lose no digits) over UNROLL 16-byte loads in flight; blocks write partials to "
                "scratch and a second kernel combines each row's partials in a fixed order, so the result does "
                "not change from run to run (no atomics).",
        .patterns = {PatternKind::Reduce},
        .needs = {"reduce_thread_per_output"},
        .space = {{"BLOCK", {512, 256, 1024}, "threads per block"},
                  {"UNROLL", {4, 2, 8}, "16-byte loads in flight per thread"},
                  {"BLOCKS_PER_SM", {4, 2, 8}, "blocks per SM the rows are spread over"},
                  // Taking turns measured 9 % faster on a 2 GB sum (H100: 0.7107 ms against 0.7833).
                  {"INTERLEAVE", {1, 0}, "the blocks of a row take turns along it (1) or walk a chunk each (0)"}},
        .repairOrder = {"UNROLL", "BLOCK", "BLOCKS_PER_SM"},
        .applies = [](const Target &t) -> std::string {
            if (auto why = lastDimOnly(t); !why.empty())
                return why;
            return rows(t) <= t.sms ? "" : "there are enough rows to give each block its own";
        },
        .check = [](const Target &, const Point &p) -> std::string {
            if (p.at("BLOCK") * p.at("BLOCKS_PER_SM") > 2048)
                return "more threads than an SM holds";
            return {};
        },
        .estimate =
            [](const Target &t, const Point &p) {
                const int block = p.at("BLOCK"), unroll = p.at("UNROLL");
                const double blocks = double(gridSplit(t, p)) * double(rows(t));
                const double eff = unroll == 1 ? 0.84 : unroll == 8 ? 0.9 : 0.91;
                return Estimate{traffic(t, 1), busy(t, blocks, block), eff,
                                "reads every element once with 16-byte loads, " + std::to_string(gridSplit(t, p)) +
                                    " blocks per output",
                                gridText(blocks, block)};
            },
        .values =
            [](const Target &t, const Point &p) {
                TemplateValues v = reduceValues(t);
                const std::int64_t split = gridSplit(t, p);
                v["SPLIT"] = std::to_string(split);
                v["GRID"] = std::to_string(rows(t) * split);
                v["COMBINE"] = std::to_string(split >= 256 ? 256 : 32 * cdiv(split, 32));
                v["PARTIAL_WORDS"] = std::to_string(rows(t) * split * 2);
                return v;
            },
    });

    out.push_back(IdeaDef{
        .id = "reduce_columns",
        .title = "Column reduction with coalesced vector loads",
        .text = "The reduced dim is not the last: let consecutive threads take consecutive output columns, "
                "VEC at a time, so each warp load is one contiguous segment, and have each thread walk down "
                "its columns keeping VEC accumulators.",
        .patterns = {PatternKind::Reduce},
        .needs = {"reduce_thread_per_output"},
        .space = {{"BLOCK", {256, 128, 512}, "threads per block"}, {"VEC", {4, 1}, "adjacent columns per thread"}},
        .repairOrder = {"VEC", "BLOCK"},
        .applies = notLastDim,
        .check = [](const Target &t,
                    const Point &p) { return vecFits(p, t.pattern.row.inner, "the size after the reduced dim"); },
        .estimate = [](const Target &t, const Point &p) { return columnsEstimate(t, p, 1, 0.88, "reads"); },
        .values =
            [](const Target &t, const Point &p) {
                TemplateValues v = reduceValues(t);
                v["GRID"] = columnsGrid(t, p);
                return v;
            },
    });

    out.push_back(IdeaDef{
        .id = "reduce_columns_split",
        .title = "Column reduction split into slices of the reduced dim",
        .text = "Cut the reduced dim into SPLIT slices handled by different blocks, so few, long columns still "
                "put enough loads in flight; each slice writes its partials to scratch and a second kernel "
                "combines the SPLIT partials of every output in a fixed order.",
        .patterns = {PatternKind::Reduce},
        .needs = {"reduce_columns"},
        .space = {{"BLOCK", {256, 128}, "threads per block"},
                  {"VEC", {4, 1}, "adjacent columns per thread"},
                  {"SPLIT", {4, 8, 16, 2, 32}, "slices of the reduced dim"}},
        .repairOrder = {"VEC", "SPLIT", "BLOCK"},
        .applies = notLastDim,
        .check =
            [](const Target &t, const Point &p) {
                if (auto why = vecFits(p, t.pattern.row.inner, "the size after the reduced dim"); !why.empty())
                    return why;
                return multipleOf(len(t), p.at("SPLIT"), "the reduced length");
            },
        .estimate =
            [](const Target &t, const Point &p) {
                const int block = p.at("BLOCK"), vec = p.at("VEC"), split = p.at("SPLIT");
                const double blocks = double(cdiv(outputs(t) / vec, block)) * split;
                // Partials: written and read once each, 16 bytes per output per slice.
                const double extra = 32.0 * double(outputs(t)) * split / std::max(1.0, t.inputBytes + t.outputBytes);
                return Estimate{traffic(t, 1) + extra, busy(t, blocks, block), vec == 4 ? 0.87 : 0.74,
                                "reads columns coalesced, " + std::to_string(split) + " slices of the reduced dim",
                                gridText(blocks, block)};
            },
        .values =
            [](const Target &t, const Point &p) {
                TemplateValues v = reduceValues(t);
                const std::int64_t colBlocks = cdiv(outputs(t) / p.at("VEC"), p.at("BLOCK"));
                v["COL_BLOCKS"] = std::to_string(colBlocks);
                v["GRID"] = std::to_string(colBlocks * p.at("SPLIT"));
                v["COMBINE_GRID"] = std::to_string(cdiv(outputs(t), p.at("BLOCK")));
                v["PARTIAL_WORDS"] = std::to_string(outputs(t) * p.at("SPLIT") * 2);
                return v;
            },
    });
}

} // namespace kf::builtin::ideas
