// Cumulative sums and products along a dim (forwards, or backwards between two flips): a block per
// row with a tiled block-wide scan when the dim is the last, a thread per column otherwise.
#include "gen/builtin/ideas.h"

#include <algorithm>
#include <cmath>

namespace kf::builtin::ideas {

namespace {

std::int64_t rows(const Target &t) { return t.pattern.row.outer; }
std::int64_t len(const Target &t) { return t.pattern.row.len; }
std::int64_t inner(const Target &t) { return t.pattern.row.inner; }

TemplateValues scanValues(const Target &t)
{
    TemplateValues v = rowValues(t);
    v["REVERSE"] = t.pattern.reverse ? "true" : "false";
    v["PRODUCT"] = t.pattern.reduceOp == "prod" ? "true" : "false";
    return v;
}

std::string floatResult(const Target &t)
{
    return t.pattern.outDtype == DType::F32 ? "" : "the result is " + toString(t.pattern.outDtype) + ", not float32";
}

} // namespace

void addScan(std::vector<IdeaDef> &out)
{
    const std::vector<PatternKind> kinds{PatternKind::Scan};

    out.push_back(IdeaDef{
        .id = "scan_rows",
        .title = "Block per row, tiled block-wide scan in double",
        .text = "Give each row to a block and walk it in tiles of BLOCK x ITEMS elements: each thread scans its "
                "ITEMS consecutive elements in registers (16-byte loads), the threads' totals are scanned across "
                "the block with warp shuffles and one exchange through shared memory, and a carry passes each "
                "tile's total to the next. The running values are doubles, so no rounding error builds up "
                "along the row; each output is rounded once.",
        .patterns = kinds,
        .space = {{"BLOCK", {256, 512, 128, 1024}, "threads per block"},
                  {"ITEMS", {8, 4, 16}, "elements per thread per tile"}},
        .repairOrder = {"ITEMS", "BLOCK"},
        .applies = [](const Target &t) -> std::string {
            if (inner(t) != 1)
                return "the scanned dim is not the last (columns)";
            return floatResult(t);
        },
        .check = [](const Target &t, const Point &p) -> std::string {
            // Tiles much longer than the row leave threads idle.
            if (std::int64_t(p.at("BLOCK")) * p.at("ITEMS") > 2 * std::max<std::int64_t>(len(t), 4 * 128))
                return "a tile of " + std::to_string(p.at("BLOCK") * p.at("ITEMS")) + " is far longer than the row";
            return registersFit(2 * p.at("ITEMS") + 16, p.at("BLOCK"));
        },
        .estimate =
            [](const Target &t, const Point &p) {
                const int block = p.at("BLOCK"), items = p.at("ITEMS");
                const double tile = double(block) * items;
                const double tiles = std::ceil(double(len(t)) / tile);
                // The block-wide scan of every tile costs about as much as reading 2K elements.
                const double eff = (len(t) % 4 == 0 ? 0.85 : 0.7) * std::min(1.0, double(len(t)) / (tiles * tile)) *
                    tile / (tile + 2048.0);
                return Estimate{traffic(t, 1), busy(t, double(rows(t)), block), eff,
                                "reads each row once, a block per row in tiles of " + std::to_string(block * items),
                                gridText(double(rows(t)), block)};
            },
        .values = [](const Target &t, const Point &) { return scanValues(t); },
    });

    out.push_back(IdeaDef{
        .id = "scan_columns",
        .title = "Thread per VEC adjacent columns, scanned down the dim",
        .text = "The scanned dim is not the last: let consecutive threads take consecutive columns, VEC at a "
                "time, so every warp access is contiguous, and have each thread walk down its columns keeping "
                "their running values in double.",
        .patterns = kinds,
        .needs = {"scan_rows"},
        .space = {{"BLOCK", {256, 128, 512}, "threads per block"}, {"VEC", {4, 1}, "adjacent columns per thread"}},
        .repairOrder = {"VEC", "BLOCK"},
        .applies = [](const Target &t) -> std::string {
            if (inner(t) == 1)
                return "the scanned dim is the last (rows)";
            return floatResult(t);
        },
        .check =
            [](const Target &t, const Point &p) {
                return p.at("VEC") == 4 ? multipleOf(inner(t), 4, "the size after the scanned dim") : std::string();
            },
        .estimate = [](const Target &t, const Point &p) { return columnsEstimate(t, p, 1, 0.86, "scans"); },
        .values =
            [](const Target &t, const Point &p) {
                TemplateValues v = scanValues(t);
                v["GRID"] = columnsGrid(t, p);
                return v;
            },
    });
}

} // namespace kf::builtin::ideas
