// softmax / log_softmax along the last dim: three passes, online max+sum in one read, the row in
// registers, rows split across blocks, and rows split across a Hopper thread-block cluster that
// shares its statistics through distributed shared memory. Along another dim: down the columns.
#include "gen/builtin/ideas.h"

#include <algorithm>

namespace kf::builtin::ideas {

namespace {

std::int64_t rows(const Target &t) { return t.pattern.row.outer; }
std::int64_t len(const Target &t) { return t.pattern.row.len; }

std::string lastDim(const Target &t) { return t.pattern.row.inner == 1 ? "" : "the softmax dim is not the last"; }

double idle(double groups, double threads) { return std::clamp(groups / threads, 0.05, 1.0); }

TemplateValues softmaxValues(const Target &t)
{
    TemplateValues v = rowValues(t);
    v["LOG"] = t.pattern.logSoftmax ? "1" : "0";
    return v;
}

} // namespace

void addSoftmax(std::vector<IdeaDef> &out)
{
    const std::vector<PatternKind> kinds{PatternKind::Softmax};

    out.push_back(IdeaDef{
        .id = "softmax_three_pass",
        .title = "Block per row, three passes",
        .text = "Give each row to a block and make three passes over it: the maximum, the sum of exp(x - max), "
                "then the outputs, each pass reduced with warp shuffles and shared memory. Subtracting the "
                "maximum keeps exp in range. Correct and simple; it reads every row three times.",
        .patterns = kinds,
        .space = {{"BLOCK", {512, 256, 1024}, "threads per block"}},
        .repairOrder = {"BLOCK"},
        .applies = lastDim,
        .estimate =
            [](const Target &t, const Point &p) {
                const int block = p.at("BLOCK");
                return Estimate{traffic(t, 3), busy(t, double(rows(t)), block), 0.72 * idle(double(len(t)), block),
                                "reads each row three times with 4-byte loads", gridText(double(rows(t)), block)};
            },
        .values = [](const Target &t, const Point &) { return softmaxValues(t); },
    });

    out.push_back(IdeaDef{
        .id = "softmax_online",
        .title = "Online max and sum in one read",
        .text = "Compute the row's maximum and sum of exponentials in a single read: keep a running maximum and "
                "rescale the running sum by exp(old max - new max) when it grows, merge the threads' (max, sum) "
                "pairs the same way, then read once more to write. Two reads instead of three, 16-byte loads.",
        .patterns = kinds,
        .needs = {"softmax_three_pass"},
        .space = {{"BLOCK", {512, 256, 1024}, "threads per block"}, {"VEC", {4, 1}, "floats per load"}},
        .repairOrder = {"VEC", "BLOCK"},
        .applies = lastDim,
        .check = [](const Target &t, const Point &p) -> std::string {
            return p.at("VEC") == 4 ? multipleOf(len(t), 4, "the row length") : "";
        },
        .estimate =
            [](const Target &t, const Point &p) {
                const int block = p.at("BLOCK"), vec = p.at("VEC");
                const double eff = (vec == 4 ? 0.86 : 0.72) * idle(double(len(t)) / vec, block);
                return Estimate{traffic(t, 2), busy(t, double(rows(t)), block), eff,
                                "reads each row twice (statistics, then outputs)", gridText(double(rows(t)), block)};
            },
        .values = [](const Target &t, const Point &) { return softmaxValues(t); },
    });

    out.push_back(IdeaDef{
        .id = "softmax_row_in_registers",
        .title = "Whole row in registers, one read",
        .text = "When a row fits in one block's registers, load it once (each thread ELEMS values as float4s), "
                "compute the maximum and the sum from registers, and write the outputs from registers: the row "
                "is read once and written once, the least traffic possible.",
        .patterns = kinds,
        .needs = {"softmax_online"},
        .space = {{"BLOCK", {256, 512, 1024, 128}, "threads per block"},
                  {"ELEMS", {16, 8, 32, 4}, "values per thread"}},
        .repairOrder = {"ELEMS", "BLOCK"},
        .applies = lastDim,
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
        .values = [](const Target &t, const Point &) { return softmaxValues(t); },
    });

    out.push_back(IdeaDef{
        .id = "softmax_split_row",
        .title = "Split long rows across blocks",
        .text = "With fewer rows than the GPU needs to stay busy, give each row SPLIT blocks: each computes the "
                "online (max, sum) of its chunk into scratch, then a second kernel merges the row's SPLIT pairs "
                "(in a fixed order) and writes its chunk.",
        .patterns = kinds,
        .needs = {"softmax_online"},
        .space = {{"BLOCK", {256, 512}, "threads per block"},
                  {"SPLIT", {8, 16, 4, 32, 2}, "blocks per row"},
                  {"VEC", {4, 1}, "floats per load"}},
        .repairOrder = {"VEC", "SPLIT", "BLOCK"},
        .applies = [](const Target &t) -> std::string {
            if (auto why = lastDim(t); !why.empty())
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
                const double eff = (vec == 4 ? 0.85 : 0.72) * idle(double(len(t)) / p.at("SPLIT") / vec, block);
                return Estimate{traffic(t, 2), busy(t, blocks, block), eff,
                                "reads each row twice, " + std::to_string(p.at("SPLIT")) + " blocks per row",
                                gridText(blocks, block)};
            },
        .values =
            [](const Target &t, const Point &p) {
                TemplateValues v = softmaxValues(t);
                v["GRID"] = std::to_string(rows(t) * p.at("SPLIT"));
                v["STAT_COUNT"] = std::to_string(rows(t) * p.at("SPLIT") * 2);
                return v;
            },
    });

    out.push_back(IdeaDef{
        .id = "softmax_cluster",
        .title = "Row split across a thread-block cluster (distributed shared memory)",
        .text = "Rows too long for one block's registers: give each row a Hopper thread-block cluster of CLUSTER "
                "blocks, each holding its chunk in registers. Each block publishes its (max, sum) in shared "
                "memory, the cluster synchronizes, and every block reads its peers' pairs through distributed "
                "shared memory (map_shared_rank) to get the row's statistics. One read, one write, no scratch.",
        .patterns = kinds,
        .needs = {"softmax_online"},
        .space = {{"CLUSTER", {8, 4, 2}, "blocks per row (cluster size)"},
                  {"BLOCK", {512, 256, 1024}, "threads per block"},
                  {"ELEMS", {16, 8, 32, 4}, "values per thread"}},
        .repairOrder = {"ELEMS", "CLUSTER", "BLOCK"},
        .applies = [](const Target &t) -> std::string {
            if (auto why = lastDim(t); !why.empty())
                return why;
            return t.major >= 9 ? "" : "thread-block clusters need a Hopper GPU (sm_90)";
        },
        .check = clusterRowFits,
        .estimate = [](const Target &t, const Point &p) { return clusterRowEstimate(t, p, 0.90); },
        .values =
            [](const Target &t, const Point &p) {
                TemplateValues v = softmaxValues(t);
                v["GRID"] = std::to_string(rows(t) * p.at("CLUSTER"));
                return v;
            },
    });

    out.push_back(IdeaDef{
        .id = "softmax_columns",
        .title = "Softmax down the columns",
        .text = "The softmax dim is not the last (channels of an activation): let consecutive threads take "
                "consecutive columns, VEC at a time, so each warp load is one contiguous segment, and have each "
                "thread keep a running (max, sum) per column in one read, then read again to write.",
        .patterns = kinds,
        .needs = {"softmax_three_pass"},
        .space = {{"BLOCK", {256, 128, 512}, "threads per block"}, {"VEC", {4, 1}, "adjacent columns per thread"}},
        .repairOrder = {"VEC", "BLOCK"},
        .applies = [](const Target &t) -> std::string {
            return t.pattern.row.inner > 1 ? "" : "the softmax dim is the last (a row softmax)";
        },
        .check = [](const Target &t, const Point &p) -> std::string {
            return p.at("VEC") == 4 ? multipleOf(t.pattern.row.inner, 4, "the size after the softmax dim") : "";
        },
        .estimate = [](const Target &t, const Point &p) { return columnsEstimate(t, p, 2, 0.85, "reads"); },
        .values =
            [](const Target &t, const Point &p) {
                TemplateValues v = softmaxValues(t);
                v["GRID"] = columnsGrid(t, p);
                return v;
            },
    });
}

} // namespace kf::builtin::ideas
