// LayerNorm and RMSNorm over the trailing dims: exact two-pass statistics, single-read statistics
// (Welford, shifted sums, sums of squares), the row in registers, and long rows split across
// blocks with a second kernel that normalizes.
#include "gen/builtin/ideas.h"

#include <algorithm>
#include <cmath>

namespace kf::builtin::ideas {

namespace {

std::int64_t rows(const Target &t) { return t.pattern.row.outer; }
std::int64_t len(const Target &t) { return t.pattern.row.len; }
bool rms(const Target &t) { return t.pattern.kind == PatternKind::RMSNorm; }

double idle(double groups, double threads) { return std::clamp(groups / threads, 0.05, 1.0); }

TemplateValues values(const Target &t)
{
    TemplateValues v = rowValues(t);
    v.merge(normValues(t));
    return v;
}

std::string vecFits(const Target &t, const Point &p)
{
    return p.at("VEC") == 4 ? multipleOf(len(t), 4, "the row length") : std::string();
}

// One block per row, the statistics in one read and the normalization in a second.
Estimate twoReads(const Target &t, const Point &p, double vecEfficiency, const std::string &how)
{
    const int block = p.at("BLOCK"), vec = p.at("VEC");
    const double eff = (vec == 4 ? vecEfficiency : 0.72) * idle(double(len(t)) / vec, block);
    return Estimate{traffic(t, 2), busy(t, double(rows(t)), block), eff,
                    "reads each row twice (" + how + ", then the normalization)", gridText(double(rows(t)), block)};
}

// The tensor the norm's input reads, only in place, for a kernel that copies it in bulk and
// applies the input's ops afterwards (Input::at_held); "" when the input reads another tensor too.
std::string bulkTensor(const Target &t) { return onlyTensorInPlace(t.pattern.input); }

// norm_grid's layout: `perRow` blocks of `span` float4s each hold a row, `blocks` of them (at most
// one per SM) hold rows `blocks / perRow` at a time. Of the splits whose chunks fit a block
// (kMostSpan), the one that keeps the most SMs busy, and of those the fewest blocks per row.
constexpr std::int64_t kMostSpan = 8192; // 128 KB: 32 values a thread at 1024 threads, 64 at 512
struct GridChunks {
    std::int64_t perRow = 0, span = 1, blocks = 0; // perRow 0: a row needs more SMs than there are
};
GridChunks gridChunks(const Target &t)
{
    const std::int64_t groups = len(t) / 4, sms = std::max(t.sms, 1);
    GridChunks best;
    for (std::int64_t perRow = cdiv(groups, kMostSpan); perRow <= sms; ++perRow) {
        const std::int64_t span = cdiv(groups, perRow);
        if (cdiv(groups, span) != perRow)
            continue; // the last block would hold nothing
        const std::int64_t blocks = std::min(sms / perRow, rows(t)) * perRow;
        if (blocks > best.blocks)
            best = {perRow, span, blocks};
    }
    return best;
}
int gridElems(const Target &t, const Point &p) { return int(4 * cdiv(gridChunks(t).span, p.at("BLOCK"))); }

// The longest row a cluster holds (norm_cluster: 8 blocks of 1024 threads, 32 values each).
constexpr std::int64_t kClusterRow = 8 * 1024 * 32;

} // namespace

void addNorm(std::vector<IdeaDef> &out)
{
    const std::vector<PatternKind> both{PatternKind::LayerNorm, PatternKind::RMSNorm};

    out.push_back(IdeaDef{
        .id = "norm_two_pass",
        .title = "Block per row, exact two-pass statistics",
        .text = "Give each row to a block: one pass for the mean, one for the variance as the mean of "
                "(x - mean)^2, both accumulated in double and reduced with warp shuffles, then a pass that "
                "normalizes and applies the affine weight and bias. Exact even when the mean is large next to "
                "the spread; reads each row three times (RMSNorm: twice).",
        .patterns = both,
        .space = {{"BLOCK", {512, 1024, 256}, "threads per block"}},
        .repairOrder = {"BLOCK"},
        .estimate =
            [](const Target &t, const Point &p) {
                const int block = p.at("BLOCK");
                const double reads = rms(t) ? 2 : 3;
                return Estimate{traffic(t, reads), busy(t, double(rows(t)), block), 0.70 * idle(double(len(t)), block),
                                "reads each row " + timesText(reads) + " with 4-byte loads, a block per row",
                                gridText(double(rows(t)), block)};
            },
        .values = [](const Target &t, const Point &) { return values(t); },
    });

    out.push_back(IdeaDef{
        .id = "norm_welford",
        .title = "Welford statistics in one vectorized read",
        .text = "Get the mean and variance in a single read: each thread runs Welford's update on its values "
                "(four at a time from 16-byte loads, taken relative to the row's first element so a large mean "
                "costs no digits), the threads' (count, mean, M2) triples merge with Chan's formula through warp "
                "shuffles, and a second read normalizes.",
        .patterns = {PatternKind::LayerNorm},
        .needs = {"norm_two_pass"},
        .space = {{"BLOCK", {512, 256, 1024}, "threads per block"}, {"VEC", {4, 1}, "floats per load"}},
        .repairOrder = {"VEC", "BLOCK"},
        .check = [](const Target &t, const Point &p) -> std::string {
            if (len(t) >= (1 << 24))
                return "counts above 2^24 are not exact in float";
            return vecFits(t, p);
        },
        .estimate = [](const Target &t, const Point &p) { return twoReads(t, p, 0.85, "Welford statistics"); },
        .values = [](const Target &t, const Point &) { return values(t); },
    });

    out.push_back(IdeaDef{
        .id = "norm_shifted_sums",
        .title = "Shifted sums in one vectorized read",
        .text = "Get the mean and variance in a single read from the sums of d and d^2, where d = x - (the row's "
                "first element): the shift keeps the sums near the spread of the data, so E[d^2] - E[d]^2 does "
                "not cancel away the variance even for a large mean, and double accumulators keep the rest. "
                "A second read normalizes with 16-byte loads and stores.",
        .patterns = {PatternKind::LayerNorm},
        .needs = {"norm_two_pass"},
        .space = {{"BLOCK", {512, 256, 1024}, "threads per block"}, {"VEC", {4, 1}, "floats per load"}},
        .repairOrder = {"VEC", "BLOCK"},
        .check = [](const Target &t, const Point &p) { return vecFits(t, p); },
        .estimate = [](const Target &t, const Point &p) { return twoReads(t, p, 0.87, "shifted sums"); },
        .values = [](const Target &t, const Point &) { return values(t); },
    });

    out.push_back(IdeaDef{
        .id = "rms_vectorized",
        .title = "Vectorized sum of squares and normalization",
        .text = "Read each row with 16-byte loads for the mean square (accumulated in double), then read it "
                "again to scale by rsqrt(mean square + eps) and the weight with 16-byte stores.",
        .patterns = {PatternKind::RMSNorm},
        .needs = {"norm_two_pass"},
        .space = {{"BLOCK", {512, 256, 1024}, "threads per block"}, {"VEC", {4, 1}, "floats per load"}},
        .repairOrder = {"VEC", "BLOCK"},
        .check = [](const Target &t, const Point &p) { return vecFits(t, p); },
        .estimate = [](const Target &t, const Point &p) { return twoReads(t, p, 0.87, "the mean square"); },
        .values = [](const Target &t, const Point &) { return values(t); },
    });

    out.push_back(IdeaDef{
        .id = "norm_row_in_registers",
        .title = "Whole row in registers, one read",
        .text = "When a row fits in one block's registers, load it once (ELEMS values per thread as float4s), "
                "take the exact two-pass statistics from registers (the mean, then the mean of squared "
                "deviations), and write the normalized row from registers: one read, one write.",
        .patterns = both,
        .needs = {"norm_two_pass"},
        .space = {{"BLOCK", {256, 512, 1024, 128}, "threads per block"},
                  {"ELEMS", {8, 16, 4, 32}, "values per thread"}},
        .repairOrder = {"ELEMS", "BLOCK"},
        .check = [](const Target &t, const Point &p) -> std::string {
            if (auto why = multipleOf(len(t), 4, "the row length"); !why.empty())
                return why;
            return holds(len(t), p.at("BLOCK"), p.at("ELEMS"));
        },
        .estimate =
            [](const Target &t, const Point &p) {
                const int block = p.at("BLOCK");
                const double fill = double(len(t)) / (double(block) * p.at("ELEMS"));
                const double eff = 0.90 * std::min(1.0, 0.5 + fill / 2) * inFlight(p.at("ELEMS"), block);
                return Estimate{traffic(t, 1), busy(t, double(rows(t)), block), eff,
                                "reads each row once and keeps it in registers", gridText(double(rows(t)), block)};
            },
        .values = [](const Target &t, const Point &) { return values(t); },
    });

    out.push_back(IdeaDef{
        .id = "norm_cluster",
        .title = "Row held across a thread-block cluster, one read",
        .text = "Rows too long for one block's registers: give each row a Hopper thread-block cluster of CLUSTER "
                "blocks, each holding its chunk in registers (ELEMS values per thread as float4s). The exact "
                "two-pass statistics become two cluster-wide sums: each block publishes its chunk's sum in shared "
                "memory, the cluster synchronizes, and every block adds its peers' sums through distributed shared "
                "memory in rank order, first for the mean, then for the squared deviations. The normalized chunk "
                "is written from registers: one read, one write, no scratch.",
        .patterns = both,
        .needs = {"norm_two_pass"},
        .space = {{"CLUSTER", {8, 4, 2}, "blocks per row (cluster size)"},
                  {"BLOCK", {512, 1024, 256}, "threads per block"},
                  {"ELEMS", {16, 8, 32, 4}, "values per thread"}},
        .repairOrder = {"ELEMS", "CLUSTER", "BLOCK"},
        .applies = [](const Target &t) -> std::string {
            if (t.major < 9)
                return "thread-block clusters need a Hopper GPU (sm_90)";
            // A row one block holds needs no cluster (norm_row_in_registers).
            if (len(t) <= 1024 * 16)
                return "a row of " + std::to_string(len(t)) + " fits in one block's registers";
            return {};
        },
        .check = clusterRowFits,
        // Two cluster barriers a row where norm_row_in_registers has none: 0.85 is a guess until measured.
        .estimate = [](const Target &t, const Point &p) { return clusterRowEstimate(t, p, 0.85); },
        .values =
            [](const Target &t, const Point &p) {
                TemplateValues v = values(t);
                v["GRID"] = std::to_string(rows(t) * p.at("CLUSTER"));
                return v;
            },
    });

    out.push_back(IdeaDef{
        .id = "norm_grid",
        .title = "Row held across the whole GPU, one read",
        .text = "Rows longer than a cluster holds (LayerNorm over [64, 256, 256]): spread each row over as many "
                "SMs as it needs, one block each holding its chunk in registers, as many rows at once as the GPU "
                "has SMs for, and take the rows in turn. While a block works on one row, a bulk copy (TMA) brings "
                "its chunk of its next row into shared memory. Each block "
                "publishes its chunk's mean and sum of squared deviations in scratch and counts itself in on the "
                "row's counter; when all have arrived, every block combines the partials in the same order "
                "(Chan's formula, in double) and writes its normalized chunk from registers. One read and one "
                "write of the input, the affine weight and bias from L2.",
        .patterns = both,
        .needs = {"norm_two_pass"},
        .space = {{"BLOCK", {1024, 512}, "threads per block"}},
        .repairOrder = {"BLOCK"},
        .applies = [](const Target &t) -> std::string {
            if (t.major < 9)
                return "bulk copies (TMA) need a Hopper GPU (sm_90)";
            if (len(t) <= kClusterRow)
                return "a thread-block cluster holds a row of " + std::to_string(len(t));
            if (bulkTensor(t).empty())
                return "the input reads more than one tensor in place";
            if (auto why = multipleOf(len(t), 4, "the row length"); !why.empty())
                return why;
            if (gridChunks(t).perRow == 0)
                return "a row of " + std::to_string(len(t)) + " needs more than " + std::to_string(t.sms) +
                    " blocks of 128 KB";
            return {};
        },
        .check = [](const Target &t, const Point &p) { return registersFit(gridElems(t, p), p.at("BLOCK")); },
        .estimate =
            [](const Target &t, const Point &p) {
                const GridChunks c = gridChunks(t);
                // The rows held at once end at a wait for all their blocks (~2 us): short rows pay more.
                const double atOnce = double(c.blocks / c.perRow);
                const double passSeconds = 8.0 * double(len(t)) * atOnce / 3.0e12;
                const double eff = 0.85 * passSeconds / (passSeconds + 2e-6);
                // Measured on an H100 (2026-12-07): the seed LayerNorm's weight and bias (a row's
                // size) come from DRAM again for every row, evict-last marks and all (Nsight
                // Compute: 789 MB read for 268 MB of x, 12 % L2 read hits; 0.428 ms against the
                // two-read split kernel's 0.313); a GroupNorm's per-channel ones cost nothing (0.487
                // against 0.548). So each pass pays for them. An L2 set-aside for persisting
                // accesses made it slower still (0.436 -> 0.552 ms, 2026-12-07-l2-set-aside.md).
                const double passes = std::ceil(double(rows(t)) / atOnce);
                return Estimate{traffic(t, 1, passes), busy(t, double(c.blocks), p.at("BLOCK")), eff,
                                "reads each row once, held across " + std::to_string(c.perRow) + " blocks",
                                gridText(double(c.blocks), p.at("BLOCK"))};
            },
        .values =
            [](const Target &t, const Point &p) {
                TemplateValues v = values(t);
                const OperandCode in = emitProgram(t.pattern.input, "Input", Loads::ReadOnly, {}, bulkTensor(t));
                v["INPUT"] = in.code;
                // The affine weight and bias (and any operand smaller than a row's output) are read
                // for every row: kept in L2. A full-size operand streams as usual.
                const EwProgram output = outputProgram(t);
                const bool small = std::all_of(output.leaves.begin(), output.leaves.end(),
                                               [&](const Leaf &l) { return l.isMask() || numel(l.shape) <= len(t); });
                v["KEPT"] = small ? "kept" : "not here: an operand is larger than a row";
                if (small)
                    v["OUTPUT"] = emitProgram(output, "Output", Loads::Kept, in.names).code;
                const GridChunks c = gridChunks(t);
                v["GRID"] = std::to_string(c.blocks);
                v["SPLIT"] = std::to_string(c.perRow);
                v["SPAN"] = std::to_string(c.span);
                v["ELEMS"] = std::to_string(gridElems(t, p));
                v["SMEM"] = std::to_string(c.span * 16);
                v["PARTIAL_COUNT"] = std::to_string(rows(t) * c.perRow * 2);
                return v;
            },
    });

    out.push_back(IdeaDef{
        .id = "norm_split_row",
        .title = "Split long rows across many blocks (partial statistics + normalize)",
        .text = "A few long rows leave most SMs idle with a block per row. Give each row SPLIT blocks: the first "
                "kernel writes each chunk's partial sums (shifted, in double) to scratch, the second combines "
                "the row's partials in a fixed order and normalizes its chunk with 16-byte accesses. Blocks "
                "that run together share a chunk of weight and bias, which L2 then serves to every row; "
                "REVERSE=1 walks the second pass backwards to reuse what L2 still holds from the first.",
        .patterns = both,
        .needs = {"norm_shifted_sums",
                  "rms_vectorized"}, // its partials are shifted sums (LayerNorm), sums of squares (RMSNorm)
        .space = {{"BLOCK", {256, 512, 1024}, "threads per block"},
                  {"SPLIT", {32, 64, 16, 128, 256, 8}, "blocks per row"},
                  {"VEC", {4, 1}, "floats per load"},
                  {"REVERSE", {1, 0}, "second pass in reverse block order"}},
        .repairOrder = {"VEC", "SPLIT", "REVERSE", "BLOCK"},
        .applies = [](const Target &t) -> std::string {
            return rows(t) < 2 * t.sms ? "" : "there are enough rows to fill the GPU";
        },
        .check =
            [](const Target &t, const Point &p) {
                return multipleOf(len(t), std::int64_t(p.at("SPLIT")) * p.at("VEC"), "the row length");
            },
        .estimate =
            [](const Target &t, const Point &p) {
                const int block = p.at("BLOCK"), vec = p.at("VEC"), split = p.at("SPLIT");
                const double blocks = double(rows(t)) * split;
                // What the first pass leaves in a ~40 MB share of L2 the reversed second pass reads again.
                const double reuse = p.at("REVERSE") ? std::min(0.8, 40e6 / std::max(1.0, t.inputBytes)) : 0.0;
                const double eff = (vec == 4 ? 0.86 : 0.72) * idle(double(len(t)) / split / vec, block);
                return Estimate{traffic(t, 2 - reuse), busy(t, blocks, block), eff,
                                "reads each row twice, " + std::to_string(split) + " blocks per row",
                                gridText(blocks, block)};
            },
        .values =
            [](const Target &t, const Point &p) {
                TemplateValues v = values(t);
                v["GRID"] = std::to_string(rows(t) * p.at("SPLIT"));
                v["PARTIAL_COUNT"] = std::to_string(rows(t) * p.at("SPLIT") * 2);
                return v;
            },
    });
}

} // namespace kf::builtin::ideas
