// Matrix-vector products and products with a few rows or columns: memory-bound, so they stream the
// long operand once at full bandwidth instead of tiling it like a GEMM. Lines of K contiguous
// values get a warp each (dot products); a few rows of A times a B stored [K, N] go down B's
// columns. Both split K across blocks when the output alone would not fill the GPU.
#include "gen/builtin/ideas.h"

#include <algorithm>

namespace kf::builtin::ideas {

namespace {

constexpr int kMaxVectors = 16;    // short vectors a warp's dot products carry (registers)
constexpr int kMaxStridedCols = 8; // columns of a B stored [K, N] read per 16-byte load of A
constexpr int kMaxStreamRows = 8;  // rows of A multiplied into each column of B

// The orientation gemv_dot takes: A's rows as the lines (few columns), or B's rows (few rows, B
// stored [N, K]); "" when neither.
std::string dotLines(const Gemm &g)
{
    const GemmSpec &s = *g.spec;
    const bool aLines = s.n <= kMaxVectors && (s.transB || s.n <= kMaxStridedCols);
    const bool bLines = s.m <= kMaxVectors && s.transB;
    if (aLines && (!bLines || s.n <= s.m))
        return "A";
    if (bLines)
        return "B";
    return {};
}

bool streams(const Gemm &g) { return g.spec->m <= kMaxStreamRows && !g.spec->transB; }

Gemm product(const Target &t)
{
    Gemm g;
    gemmOf(t, g);
    return g;
}

std::int64_t lines(const Gemm &g) { return dotLines(g) == "A" ? g.spec->m : g.spec->n; }

// Slices of K: enough blocks for BLOCKS_PER_SM on every SM, each slice at least `minK` deep.
std::int64_t splitK(const Target &t, const Point &p, std::int64_t blocks, std::int64_t minK)
{
    const Gemm g = product(t);
    const std::int64_t most = std::clamp<std::int64_t>(g.spec->k / std::max<std::int64_t>(minK, 1), 1, 65535);
    return std::clamp<std::int64_t>(cdiv(std::int64_t(t.sms) * p.at("BLOCKS_PER_SM"), blocks * g.batch), 1, most);
}

std::int64_t dotBlocks(const Gemm &g, const Point &p) { return cdiv(lines(g), p.at("WARPS")); }
std::int64_t dotSplit(const Target &t, const Point &p)
{
    return splitK(t, p, dotBlocks(product(t), p), 4 * 32 * p.at("UNROLL"));
}

std::int64_t streamCols(const Gemm &g) { return g.spec->n % 4 == 0 && g.strideB % 4 == 0 ? 4 : 1; }
std::int64_t streamBlocks(const Gemm &g, const Point &p) { return cdiv(cdiv(g.spec->n, streamCols(g)), p.at("BLOCK")); }
std::int64_t streamSplit(const Target &t, const Point &p) { return splitK(t, p, streamBlocks(product(t), p), 64); }

// The bytes a skinny product must move: both operands read once and the output written once.
Estimate streamEstimate(const Target &t, double blocks, int threads, double efficiency, const std::string &how)
{
    Estimate e;
    e.traffic = 1;
    e.busy = busy(t, blocks, threads);
    e.efficiency = efficiency;
    e.reads = how;
    e.grid = gridText(blocks, threads);
    return e;
}

TemplateValues splitValues(const std::string &id, const Target &t, std::int64_t split)
{
    const Gemm g = product(t);
    TemplateValues v = gemmValues(id, t);
    v["SPLIT"] = std::to_string(split);
    v["SPLITK"] = split > 1 ? "1" : "0";
    const std::int64_t outputs = g.batch * g.spec->m * g.spec->n;
    v["PARTIAL_WORDS"] = std::to_string(split > 1 ? outputs * split : 1); // one unused word without a split
    v["COMBINE_GRID"] = std::to_string(cdiv(outputs, 256));
    return v;
}

} // namespace

std::string gemvTakes(const Target &t)
{
    Gemm g;
    if (!gemmOf(t, g).empty() || t.pattern.kind != PatternKind::Matmul || !rowsOfA(g).empty())
        return {};
    if (!dotLines(g).empty())
        return "gemv_dot";
    if (streams(g))
        return "gemv_stream";
    return {};
}

void addGemv(std::vector<IdeaDef> &out)
{
    out.push_back(IdeaDef{
        .id = "gemv_dot",
        .title = "Matrix-vector product: a warp per line, split K",
        .text = "A product with at most 16 columns (or rows, B stored [N, K]) is bound by reading the long "
                "operand once. Give each of its lines (K contiguous values) to a warp whose lanes stride over K "
                "with 16-byte streaming loads, UNROLL in flight, multiplying by the short vectors that every "
                "warp finds in L1; each 4-term product goes into a double sum, so long dot products lose no "
                "digits. When there are too few lines to fill the GPU, K is split across blocks whose partial "
                "sums a second kernel adds in a fixed order before the epilogue.",
        .patterns = {PatternKind::Matmul},
        .space = {{"WARPS", {8, 4, 16}, "lines (warps) per block"},
                  {"UNROLL", {4, 2, 8}, "16-byte loads in flight per lane"},
                  {"BLOCKS_PER_SM", {4, 8, 2}, "blocks per SM split K aims for"}},
        .repairOrder = {"UNROLL", "WARPS", "BLOCKS_PER_SM"},
        .applies = [](const Target &t) -> std::string {
            Gemm g;
            if (auto why = gemmOf(t, g); !why.empty())
                return why;
            if (auto why = rowsOfA(g); !why.empty())
                return why;
            if (dotLines(g).empty())
                return "more than " + std::to_string(kMaxVectors) +
                    " rows and columns (or a B stored [K, N] with more than " + std::to_string(kMaxStridedCols) +
                    " columns)";
            return {};
        },
        .check = [](const Target &t, const Point &p) -> std::string {
            const Gemm g = product(t);
            // Registers: a double sum and a 16-byte load per vector, kUnroll loads of the line.
            const std::int64_t vectors = dotLines(g) == "A" ? g.spec->n : g.spec->m;
            if (vectors * 6 + 4 * p.at("UNROLL") > 160)
                return "the sums and loads would not fit in registers";
            if (dotBlocks(g, p) > 2147483647)
                return "more blocks than a grid holds";
            return {};
        },
        .estimate =
            [](const Target &t, const Point &p) {
                const Gemm g = product(t);
                const double blocks = double(dotBlocks(g, p)) * double(dotSplit(t, p)) * double(g.batch);
                const double eff = g.spec->k % 4 == 0 ? (p.at("UNROLL") == 2 ? 0.84 : 0.88) : 0.6;
                return streamEstimate(t, blocks, 32 * p.at("WARPS"), eff,
                                      "streams the long operand once with 16-byte loads, a warp per line, K in " +
                                          std::to_string(dotSplit(t, p)) + " slices");
            },
        .values =
            [](const Target &t, const Point &p) {
                const Gemm g = product(t);
                TemplateValues v = splitValues("gemv_dot", t, dotSplit(t, p));
                v["A_LINES"] = dotLines(g) == "A" ? "true" : "false";
                v["GRID"] = std::to_string(dotBlocks(g, p));
                v["BLOCK"] = std::to_string(32 * p.at("WARPS"));
                return v;
            },
    });

    out.push_back(IdeaDef{
        .id = "gemv_stream",
        .title = "A few rows times a matrix: stream B's columns, split K",
        .text = "A product of at most 8 rows with a B stored [K, N] is bound by reading B once, and B's rows are "
                "contiguous in N: give each thread 4 adjacent columns (one 16-byte load per row of B) and walk "
                "down K, multiplying by the rows' values at k (one broadcast load for the warp); float sums go "
                "into double sums every 16 steps. K is split across blocks when the columns alone would not "
                "fill the GPU, and a second kernel adds the partials in a fixed order before the epilogue.",
        .patterns = {PatternKind::Matmul},
        .space = {{"BLOCK", {128, 256, 64}, "threads per block, 4 columns each"},
                  {"BLOCKS_PER_SM", {4, 8, 2}, "blocks per SM split K aims for"}},
        .repairOrder = {"BLOCK", "BLOCKS_PER_SM"},
        .applies = [](const Target &t) -> std::string {
            Gemm g;
            if (auto why = gemmOf(t, g); !why.empty())
                return why;
            if (auto why = rowsOfA(g); !why.empty())
                return why;
            if (!streams(g))
                return "more than " + std::to_string(kMaxStreamRows) + " rows, or B is stored [N, K]";
            return {};
        },
        .estimate =
            [](const Target &t, const Point &p) {
                const Gemm g = product(t);
                const double blocks = double(streamBlocks(g, p)) * double(streamSplit(t, p)) * double(g.batch);
                return streamEstimate(t, blocks, p.at("BLOCK"), streamCols(g) == 4 ? 0.86 : 0.6,
                                      "streams B once, 4 columns per thread, K in " +
                                          std::to_string(streamSplit(t, p)) + " slices");
            },
        .values =
            [](const Target &t, const Point &p) {
                const Gemm g = product(t);
                TemplateValues v = splitValues("gemv_stream", t, streamSplit(t, p));
                v["GRID"] = std::to_string(streamBlocks(g, p));
                return v;
            },
    });
}

} // namespace kf::builtin::ideas
