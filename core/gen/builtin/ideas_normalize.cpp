// Elementwise ops around a reduction (x / sum(|x|), x / ||x||_2, x * rsqrt(mean(x^2) + eps) over any
// dim, a tensor divided by its norm): the row's value first, then every element of the row with
// it, a block per row, rows spread over the GPU when they are few, or columns when the reduced dim
// is not the last.
#include "gen/builtin/ideas.h"

#include <algorithm>

namespace kf::builtin::ideas {

namespace {

std::int64_t rows(const Target &t) { return t.pattern.row.outer; }
std::int64_t len(const Target &t) { return t.pattern.row.len; }
std::int64_t inner(const Target &t) { return t.pattern.row.inner; }

double idle(double groups, double threads) { return std::clamp(groups / threads, 0.05, 1.0); }

TemplateValues normalizeValues(const Target &t)
{
    TemplateValues v = rowValues(t);
    v["REDUCTION"] = emitReduction(t.pattern);
    return v;
}

// The most values of a column a thread keeps in registers (normalize_columns_held): 80 registers
// with 64 (ptxas, sm_90a), room for 256 threads a block.
constexpr std::int64_t kMostHeld = 64;

// The one tensor a column kernel may keep in registers: the reduction's input reads only it, in
// place, and the output reads it in place and uses the column's value; "" when there is none.
std::string heldTensor(const Target &t)
{
    const std::string x = onlyTensorInPlace(t.pattern.input);
    const EwProgram output = outputProgram(t);
    return !x.empty() && readsOnlyInPlace(output, x) && usesAcc(output) ? x : std::string();
}

// Reads of the input: the second read of a row comes from L2 when the rows in flight fit there
// (about 30 of the H200's 50 MB left to them).
double reads(const Target &t, double rowsInFlight)
{
    const double bytes = std::min(rowsInFlight, double(rows(t))) * double(len(t) * inner(t)) * 4;
    return bytes < 30e6 ? 1.1 : 2.0;
}

} // namespace

void addNormalize(std::vector<IdeaDef> &out)
{
    const std::vector<PatternKind> kinds{PatternKind::Normalize};

    out.push_back(IdeaDef{
        .id = "normalize_rows",
        .title = "Block per row: the row's reduction, then its elements",
        .text = "Give each row to a block: a first read reduces the row (double for sums, VEC floats per load, "
                "combined in a fixed order), a second read computes every output element from its inputs and "
                "the row's value, with no tensor written in between. Rows small enough come back from L2 for "
                "the second read.",
        .patterns = kinds,
        .space = {{"BLOCK", {512, 256, 1024}, "threads per block"}, {"VEC", {4, 1}, "floats per load"}},
        .repairOrder = {"VEC", "BLOCK"},
        .applies = [](const Target &t) -> std::string {
            if (inner(t) != 1)
                return "the reduced dim is not the last (columns)";
            // Fewer rows than SMs leave most of the GPU idle (one row: a single block for the tensor).
            return rows(t) > t.sms ? "" : std::to_string(rows(t)) + " rows would leave most SMs idle";
        },
        .check =
            [](const Target &t, const Point &p) {
                return p.at("VEC") == 4 ? multipleOf(len(t), 4, "the row length") : std::string();
            },
        .estimate =
            [](const Target &t, const Point &p) {
                const int block = p.at("BLOCK"), vec = p.at("VEC");
                const double r = reads(t, double(t.sms) * (2048 / block));
                const double eff = (vec == 4 ? 0.88 : 0.72) * idle(double(len(t)) / vec, block);
                return Estimate{traffic(t, r), busy(t, double(rows(t)), block), eff,
                                "reads each row " + timesText(r) + ", a block per row",
                                gridText(double(rows(t)), block)};
            },
        .values = [](const Target &t, const Point &) { return normalizeValues(t); },
    });

    out.push_back(IdeaDef{
        .id = "normalize_rows_cluster",
        .title = "Row held across a thread-block cluster: the input read once",
        .text = "Rows too long for one block to hold, and too many in flight for L2 to serve the block-per-row "
                "kernel's second read: give each row a Hopper thread-block cluster of CLUSTER blocks, each keeping "
                "its chunk of the row in registers (ELEMS values per thread, a warp's loads contiguous) and "
                "reducing it as it loads it. Each block publishes its chunk's value in shared memory, the cluster "
                "synchronizes, and every block combines its peers' values through distributed shared memory in "
                "rank order; the outputs are computed from the registers. One read and one write of the input.",
        .patterns = kinds,
        .needs = {"normalize_rows"},
        .space = {{"CLUSTER", {8, 4, 2}, "blocks per row (cluster size)"},
                  {"BLOCK", {512, 1024, 256}, "threads per block"},
                  {"ELEMS", {32, 16, 8}, "values per thread"}},
        .repairOrder = {"ELEMS", "CLUSTER", "BLOCK"},
        .applies = [](const Target &t) -> std::string {
            if (t.major < 9)
                return "thread-block clusters need a Hopper GPU (sm_90)";
            if (inner(t) != 1)
                return "the reduced dim is not the last (columns)";
            // Rows in flight as normalize_rows has them at its first point (512 threads, four blocks an SM).
            if (reads(t, double(t.sms) * (2048 / 512)) < 1.5)
                return "the rows in flight fit in L2, which serves the block-per-row kernel's second read";
            if (heldTensor(t).empty())
                return "the input is not one tensor read in place by the reduction and the output";
            return {};
        },
        .check = clusterRowFits,
        // Measured for norm_cluster, the same cluster layout: 75 % of the copy floor's rate (H100,
        // instance norm, 2026-12-07).
        .estimate = [](const Target &t, const Point &p) { return clusterRowEstimate(t, p, 0.75); },
        .values =
            [](const Target &t, const Point &p) {
                TemplateValues v = rowValues(t, Loads::ReadOnly, heldTensor(t));
                v["REDUCTION"] = emitReduction(t.pattern);
                v["GRID"] = std::to_string(rows(t) * p.at("CLUSTER"));
                return v;
            },
    });

    out.push_back(IdeaDef{
        .id = "normalize_split",
        .title = "Few long rows spread over the GPU, then applied",
        .text = "When there are fewer rows than SMs (a whole tensor divided by its norm), split each row over as "
                "many blocks as fill the GPU: each reduces its chunk into a partial in scratch (UNROLL 16-byte "
                "loads in flight per thread), then a second kernel over the same chunks combines the row's "
                "partials in a fixed order and writes its chunk's outputs. Two reads of the input, every SM busy, "
                "and no atomics.",
        .patterns = kinds,
        .needs = {"normalize_rows"},
        .space = {{"BLOCK", {512, 256, 1024}, "threads per block"},
                  {"UNROLL", {4, 2, 8}, "16-byte loads in flight per thread"},
                  {"BLOCKS_PER_SM", {4, 2, 8}, "blocks per SM the rows are spread over"}},
        .repairOrder = {"UNROLL", "BLOCK", "BLOCKS_PER_SM"},
        .applies = [](const Target &t) -> std::string {
            if (inner(t) != 1)
                return "the reduced dim is not the last (columns)";
            return rows(t) <= t.sms ? "" : "there are enough rows to give each block its own";
        },
        .check = [](const Target &, const Point &p) -> std::string {
            return p.at("BLOCK") * p.at("BLOCKS_PER_SM") > 2048 ? "more threads than an SM holds" : "";
        },
        .estimate =
            [](const Target &t, const Point &p) {
                const int block = p.at("BLOCK");
                const double blocks = double(gridSplit(t, p)) * double(rows(t));
                const double r = reads(t, 0) > 1.5 ? 2.0 : 1.1;
                return Estimate{traffic(t, r), busy(t, blocks, block), p.at("UNROLL") == 1 ? 0.84 : 0.9,
                                "reads the input " + timesText(r) + ", " + std::to_string(gridSplit(t, p)) +
                                    " blocks per row",
                                gridText(blocks, block)};
            },
        .values =
            [](const Target &t, const Point &p) {
                TemplateValues v = normalizeValues(t);
                const std::int64_t split = gridSplit(t, p);
                v["SPLIT"] = std::to_string(split);
                v["GRID"] = std::to_string(rows(t) * split);
                v["PARTIAL_WORDS"] = std::to_string(rows(t) * split * 2);
                return v;
            },
    });

    out.push_back(IdeaDef{
        .id = "normalize_columns",
        .title = "Columns of the reduced dim, a thread per VEC adjacent columns",
        .text = "The reduced dim is not the last: let consecutive threads take consecutive columns, VEC at a "
                "time, so every warp load is contiguous; each thread walks down its columns to reduce them "
                "(double for sums), then walks again to write every element with its column's value.",
        .patterns = kinds,
        .needs = {"normalize_rows"},
        .space = {{"BLOCK", {256, 128, 512}, "threads per block"}, {"VEC", {4, 1}, "adjacent columns per thread"}},
        .repairOrder = {"VEC", "BLOCK"},
        .applies = [](const Target &t) -> std::string {
            return inner(t) > 1 ? "" : "the reduced dim is the last (rows)";
        },
        .check =
            [](const Target &t, const Point &p) {
                return p.at("VEC") == 4 ? multipleOf(inner(t), 4, "the size after the reduced dim") : std::string();
            },
        .estimate =
            [](const Target &t, const Point &p) {
                const double r = reads(t, double(t.sms) * (2048 / p.at("BLOCK")) * p.at("VEC") / double(inner(t)));
                return columnsEstimate(t, p, r, 0.86, "reads");
            },
        .values =
            [](const Target &t, const Point &p) {
                TemplateValues v = normalizeValues(t);
                v["GRID"] = columnsGrid(t, p);
                v["HOLD"] = "0";
                v["MOST_HELD"] = std::to_string(kMostHeld);
                return v;
            },
    });

    out.push_back(IdeaDef{
        .id = "normalize_columns_held",
        .title = "Columns of the reduced dim held in registers: the input read once",
        .text = "The reduced dim is not the last and is short (at most 64): let each thread load its column into "
                "registers as it reduces it, then compute every output element from those registers and the "
                "column's value. The input is read once, where the second walk of the two-walk kernel goes back "
                "to memory because the columns in flight are more than L2 holds.",
        .patterns = kinds,
        .needs = {"normalize_columns"},
        .space = {{"BLOCK", {256, 128, 512}, "threads per block"}, {"VEC", {1}, "adjacent columns per thread"}},
        .repairOrder = {"BLOCK"},
        .applies = [](const Target &t) -> std::string {
            if (inner(t) <= 1)
                return "the reduced dim is the last (rows)";
            if (len(t) > kMostHeld)
                return "a column of " + std::to_string(len(t)) + " values is more than the " +
                    std::to_string(kMostHeld) + " registers a thread holds it in";
            const std::string x = heldTensor(t);
            if (x.empty())
                return "the input is not one tensor read in place by the reduction and the output";
            return {};
        },
        .estimate = [](const Target &t, const Point &p) { return columnsEstimate(t, p, 1.0, 0.86, "reads"); },
        .values =
            [](const Target &t, const Point &p) {
                TemplateValues v = rowValues(t, Loads::ReadOnly, heldTensor(t));
                v["REDUCTION"] = emitReduction(t.pattern);
                v["GRID"] = columnsGrid(t, p);
                v["HOLD"] = "1";
                v["MOST_HELD"] = std::to_string(kMostHeld);
                return v;
            },
        .templateName = "normalize_columns",
    });
}

} // namespace kf::builtin::ideas
