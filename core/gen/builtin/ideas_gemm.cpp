// Matrix products (matmul, mm, bmm, linear, addmm) with their bias and elementwise epilogue: fp32
// register tiles on the CUDA cores, 3xTF32 tensor cores (fp32-accurate), and under the loose
// policy single-pass TF32 and FP16 tensor cores. Also the helpers the convolution ideas share.
#include "gen/builtin/ideas.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>

namespace kf::builtin::ideas {

// ---- shared by the GEMM and convolution ideas ----

std::vector<ParamDim> tileSpace(const std::vector<TileShape> &shapes, const std::vector<std::string> &meanings)
{
    std::vector<ParamDim> dims;
    for (const TileShape &s : shapes)
        for (std::size_t i = 0; i < s.size(); ++i) {
            auto it = std::find_if(dims.begin(), dims.end(), [&](const ParamDim &d) { return d.name == s[i].first; });
            if (it == dims.end()) {
                dims.push_back({s[i].first, {}, i < meanings.size() ? meanings[i] : s[i].first});
                it = dims.end() - 1;
            }
            if (std::find(it->values.begin(), it->values.end(), s[i].second) == it->values.end())
                it->values.push_back(s[i].second);
        }
    return dims;
}

std::string tileListed(const std::vector<TileShape> &shapes, const Point &p)
{
    for (const TileShape &s : shapes) {
        bool all = true;
        for (const auto &[name, value] : s)
            all = all && p.count(name) && p.at(name) == value;
        if (all)
            return {};
    }
    return "the tile shape " + pointText(p) + " is not one of the shapes known to compile without spills";
}

std::string needsLoose(const Target &t, const std::string &what)
{
    return t.policy == Policy::Loose ? "" : what + " is only admitted under the loose policy";
}

// 3xbf16 keeps about 16 bits of each operand: 2e-5 to 5.4e-5 of the output's scale on plain
// products and convolutions (H100), inside the strict 1e-4. A tail can turn absolute error into
// relative error: two products multiplied measured 1.07e-4 and a batched product, tanh and an L2
// norm 6.0e-5, both promoted every step. A stage that feeds a tail keeps 3xTF32.
std::string bf16x3Fits(const Target &t, const std::string &what)
{
    return t.pattern.feedsTail
        ? what + " that goes on to a tail needs 3xTF32's accuracy (3xbf16 measured 1.07e-4 there)"
        : "";
}

Estimate computeEstimate(const Target &t, double flops, double peakTflops, double fraction, double tiles, int threads,
                         int perSm, const std::string &how)
{
    // The memory floor the planner measures against: the problem's bytes at ~4 TB/s.
    const double bytes = t.problem ? t.problem->bytes() : t.inputBytes + t.paramBytes + t.outputBytes;
    const double memorySeconds = std::max(bytes, 1.0) / 4.0e12;
    const double rate = peakTflops * 1e12 * std::max(fraction, 1e-3) * double(t.sms) / 132.0;
    const double floors = flops / rate / memorySeconds; // the product's time in memory floors
    const double slots = double(t.sms) * std::max(perSm, 1);
    const double waves = std::max(1.0, std::ceil(tiles / slots));
    Estimate e;
    e.traffic = 1;
    e.busy = std::clamp(tiles / (waves * slots), 1e-3, 1.0);
    // relative() = max(1 / 0.85, floors) / busy: memory-bound only for very thin products.
    e.efficiency = std::min(0.85, 1.0 / std::max(floors, 1e-9));
    e.reads = how;
    e.grid = gridText(tiles, threads);
    if (waves > 1) {
        char buf[48];
        std::snprintf(buf, sizeof buf, " in %.0f waves", waves);
        e.grid += buf;
    }
    return e;
}

TemplateValues epilogueValues(const std::string &id, const EwProgram &program, const Leaf &bias, double alpha,
                              double beta, const std::vector<IndexSegment> &index)
{
    // The product as the program sees it: alpha * acc + beta * bias, as steps ahead of the program's.
    EwProgram p = program;
    std::vector<EwStep> head;
    EwArg product = EwArg::acc(0);
    if (alpha != 1) {
        head.push_back({"mul", {product, EwArg::scalar(alpha)}, "alpha"});
        product = EwArg::step(int(head.size()) - 1);
    }
    if (!bias.tensor.empty() && beta != 0) {
        p.leaves.push_back(bias);
        EwArg b = EwArg::leaf(int(p.leaves.size()) - 1);
        if (beta != 1) {
            head.push_back({"mul", {b, EwArg::scalar(beta)}, "beta"});
            b = EwArg::step(int(head.size()) - 1);
        }
        head.push_back({"add", {product, b}, "bias"});
        product = EwArg::step(int(head.size()) - 1);
    }
    auto shift = [&](EwArg a) {
        if (a.kind == EwArg::Kind::Step)
            a.index += int(head.size());
        else if (a.kind == EwArg::Kind::Acc)
            a = product;
        return a;
    };
    for (EwStep &s : p.steps)
        for (EwArg &a : s.args)
            a = shift(a);
    p.result = shift(p.result);
    p.steps.insert(p.steps.begin(), head.begin(), head.end());

    auto text = loadTemplate(id);
    const EpilogueCode e = emitEpilogue(p, index, text ? identifiersOf(*text) : std::set<std::string>{});
    return {{"EPILOGUE", e.expr}, {"EPILOGUE_PARAMS", e.params}, {"EPILOGUE_ARGS", e.args}};
}

namespace {

// Dense H200 rates (TFLOP/s) and the fractions the templates reached on it (the benchmark of
// 2026-12-02), at their benchmarked tile shapes.
constexpr double kFp32Tflops = 67, kTf32Tflops = 494, kFp16Tflops = 989;

} // namespace

std::string gemmOf(const Target &t, Gemm &g)
{
    const Pattern &p = t.pattern;
    if (p.gemms.size() != 1)
        return std::to_string(p.gemms.size()) + " matrix products in one kernel (the templates compute one)";
    const GemmSpec &s = p.gemms[0];
    g.spec = &s;
    if (p.outDtype != DType::F32)
        return "the result is " + toString(p.outDtype) + ", not float32";
    const TensorSpec *a = t.problem ? t.problem->tensor(s.a) : nullptr;
    const TensorSpec *b = t.problem ? t.problem->tensor(s.b) : nullptr;
    if (!a || !b)
        return "an operand is not a tensor of the problem";
    if (a->dtype != DType::F32 || b->dtype != DType::F32)
        return "an operand is not float32";
    if (s.m < 1 || s.n < 1 || s.k < 1 || s.m >= INT_MAX || s.n >= INT_MAX || s.k >= INT_MAX)
        return "a matrix dim is empty or does not fit an int";
    g.batch = std::max<std::int64_t>(1, numel(s.batch));
    if (g.batch > 65535)
        return "more than 65535 batches";
    auto stride = [&](const TensorSpec &x, std::int64_t matrix, std::int64_t &out) {
        if (numel(x.shape) == matrix)
            out = 0;
        else if (numel(x.shape) == g.batch * matrix)
            out = matrix;
        else
            return false;
        return true;
    };
    if (!stride(*a, s.m * s.k, g.strideA) || !stride(*b, s.k * s.n, g.strideB))
        return "an operand broadcasts over part of the batch dims";
    g.strideC = g.batch > 1 ? s.m * s.n : 0;
    if (s.op == "aten::linear") {
        g.out.assign(a->shape.begin(), a->shape.end() - 1);
        g.out.push_back(s.n);
    } else {
        g.out = s.batch;
        g.out.push_back(s.m);
        g.out.push_back(s.n);
    }
    if (p.program.shape != g.out)
        return "the epilogue reshapes the product (" + shapeText(p.program.shape) + ")";
    return {};
}

std::string rowsOfA(const Gemm &g)
{
    return g.spec && g.spec->transA ? "A is stored [K, M] (a transposed view), which this template does not read"
                                    : std::string();
}

namespace {

std::string gemmApplies(const Target &t)
{
    Gemm g;
    if (auto why = gemmOf(t, g); !why.empty())
        return why;
    if (auto gemv = gemvTakes(t); !gemv.empty())
        return "a product with " + std::to_string(std::min(g.spec->m, g.spec->n)) +
            (g.spec->m < g.spec->n ? " rows" : " columns") + " is streamed by " + gemv + ", not tiled";
    return {};
}

Gemm gemm(const Target &t)
{
    Gemm g;
    gemmOf(t, g);
    return g;
}

// The mma.sync templates read A's rows K-contiguous only.
std::string mmaApplies(const Target &t)
{
    if (auto why = gemmApplies(t); !why.empty())
        return why;
    return rowsOfA(gemm(t));
}

double gemmFlops(const Gemm &g)
{
    return 2.0 * double(g.batch) * double(g.spec->m) * double(g.spec->n) * double(g.spec->k);
}

// The fraction of a block tile that holds real outputs, times how close its operand reuse
// (BM*BN/(BM+BN)) comes to the benchmarked tile's.
double tileFit(std::int64_t m, std::int64_t n, int bm, int bn, double reference)
{
    const double used =
        double(std::min<std::int64_t>(m, bm)) * double(std::min<std::int64_t>(n, bn)) / (double(bm) * bn);
    return used * std::min(1.0, double(bm) * bn / (bm + bn) / reference);
}

} // namespace

TemplateValues gemmValues(const std::string &id, const Target &t)
{
    const Gemm g = gemm(t);
    const GemmSpec &s = *g.spec;
    TemplateValues v{
        {"M", std::to_string(s.m)},
        {"N", std::to_string(s.n)},
        {"K", std::to_string(s.k)},
        {"BATCH", std::to_string(g.batch)},
        {"A_BATCH_STRIDE", std::to_string(g.strideA)},
        {"B_BATCH_STRIDE", std::to_string(g.strideB)},
        {"C_BATCH_STRIDE", std::to_string(g.strideC)},
        {"TRANS_A", s.transA ? "true" : "false"},
        {"TRANS_B", s.transB ? "true" : "false"},
        {"A", s.a},
        {"B", s.b},
    };
    Leaf bias;
    if (!s.bias.empty()) {
        const TensorSpec *spec = t.problem->tensor(s.bias);
        bias = Leaf{s.bias, spec ? spec->shape : Shape{s.n}, spec ? spec->shape : Shape{s.n}};
    }
    // The output is [batch * M, N] row-major: col innermost, then the row of all batches.
    const std::string outer =
        g.batch > 1 ? "((long long)batch * " + std::to_string(s.m) + " + row)" : std::string("row");
    const std::vector<IndexSegment> index{{1, s.n, "col"}, {s.n, g.batch * s.m, outer}};
    for (auto &[k, val] : epilogueValues(id, t.pattern.program, bias, s.alpha, s.beta, index))
        v[k] = val;
    return v;
}

namespace {

std::string operandsText(const Target &t)
{
    const Gemm g = gemm(t);
    std::string s = std::to_string(g.spec->m) + "x" + std::to_string(g.spec->n) + "x" + std::to_string(g.spec->k);
    if (g.batch > 1)
        s = std::to_string(g.batch) + " x " + s;
    return s;
}

// Shared memory (bytes) of the mma templates: cp.async stages of A [BM][BK+4] and B.
int mmaSmem(const Point &p)
{
    const int bm = p.at("BM"), bn = p.at("BN"), bk = p.at("BK");
    return p.at("STAGES") * (bm * (bk + 4) + bk * bn + 8 * bk + 4 * bn) * 4;
}

// The static checks of the templates' tile copies: kCols-wide rows in chunks of `vec` floats
// spread over the threads (mma templates), or an equal number of chunks per thread (tiled ones).
std::string copiesSpread(int threads, int rows, int cols, int vec, bool equalShare)
{
    const int perRow = cols / vec;
    const bool ok =
        equalShare ? (rows * cols) % (vec * threads) == 0 : threads % perRow == 0 && rows % (threads / perRow) == 0;
    return ok ? ""
              : "a " + std::to_string(rows) + "x" + std::to_string(cols) + " tile copy does not spread evenly over " +
            std::to_string(threads) + " threads";
}

std::string copiesFit(const Target &t, const Point &p, int threads, bool equalShare)
{
    const Gemm g = gemm(t);
    const GemmSpec &s = *g.spec;
    const int bm = p.at("BM"), bn = p.at("BN"), bk = p.at("BK");
    const int vecA = (s.transA ? s.m : s.k) % 4 == 0 && g.strideA % 4 == 0 ? 4 : 1;
    const int vecB = (s.transB ? s.k : s.n) % 4 == 0 && g.strideB % 4 == 0 ? 4 : 1;
    if (auto why = s.transA ? copiesSpread(threads, bk, bm, vecA, equalShare)
                            : copiesSpread(threads, bm, bk, vecA, equalShare);
        !why.empty())
        return why;
    return s.transB ? copiesSpread(threads, bn, bk, vecB, equalShare) : copiesSpread(threads, bk, bn, vecB, equalShare);
}

std::string mmaFits(const Target &t, const std::vector<TileShape> &tiles, const Point &p)
{
    if (auto why = tileListed(tiles, p); !why.empty())
        return why;
    return copiesFit(t, p, (p.at("BM") / p.at("WM")) * (p.at("BN") / p.at("WN")) * 32, false);
}

int residentBlocks(const Target &t, int threads, int registers, int smem, int wanted)
{
    int blocks = std::min({32, 2048 / threads, 65536 / std::max(threads * registers, 1)});
    if (smem > 0)
        blocks = std::min(blocks, t.smemPerSm / (smem + 1024));
    return std::max(1, wanted > 0 ? std::min(blocks, wanted) : blocks);
}

const std::vector<TileShape> kSimtTiles{
    {{"BM", 128}, {"BN", 128}, {"BK", 8}, {"TM", 8}, {"TN", 8}},
    {{"BM", 128}, {"BN", 128}, {"BK", 16}, {"TM", 8}, {"TN", 8}},
    {{"BM", 64}, {"BN", 128}, {"BK", 16}, {"TM", 8}, {"TN", 4}},
};
const std::vector<std::string> kSimtMeanings{"block tile rows", "block tile columns", "depth of a shared-memory stage",
                                             "rows per thread", "columns per thread"};

TileShape mma(int bm, int bn, int bk, int wm, int wn, int stages, int minBlocks)
{
    return {
        {"BM", bm},    {"BN", bn}, {"BK", bk}, {"WM", wm}, {"WN", wn}, {"STAGES", stages}, {"MIN_BLOCKS", minBlocks},
        {"GROUP_M", 8}};
}
const std::vector<std::string> kMmaMeanings{"block tile rows",
                                            "block tile columns",
                                            "depth of a pipeline stage",
                                            "warp tile rows",
                                            "warp tile columns",
                                            "cp.async pipeline stages",
                                            "blocks per SM the registers are sized for",
                                            "block-rows per L2 group"};

// The 32-column tile is for products of few columns (a tall matrix times a narrow one), which
// reads A once at the width of the output instead of padding a 128-wide tile. (256x32 with warps
// of 64x32 spilled where A's rows are not 16-byte aligned.)
const std::vector<TileShape> kTf32x3Tiles{mma(128, 128, 32, 64, 32, 3, 1), mma(128, 128, 32, 64, 32, 4, 1),
                                          mma(128, 256, 32, 64, 64, 3, 1), mma(128, 128, 16, 64, 32, 5, 1),
                                          mma(128, 32, 32, 32, 32, 4, 2)};
const std::vector<TileShape> kTf32Tiles{mma(128, 256, 32, 64, 64, 3, 1), mma(128, 128, 32, 64, 32, 3, 1),
                                        mma(256, 128, 32, 64, 64, 3, 1), mma(64, 128, 32, 32, 64, 4, 2)};

TileShape half(int bm, int bn, int bk, int wm, int wn)
{
    return {{"BM", bm}, {"BN", bn}, {"BK", bk}, {"WM", wm}, {"WN", wn}, {"MIN_BLOCKS", 1}, {"GROUP_M", 8}};
}
const std::vector<std::string> kHalfMeanings{
    "block tile rows",        "block tile columns", "depth of a shared-memory stage",
    "warp tile rows",         "warp tile columns",  "blocks per SM the registers are sized for",
    "block-rows per L2 group"};
const std::vector<TileShape> kFp16Tiles{half(128, 256, 32, 64, 64), half(128, 128, 32, 64, 32),
                                        half(128, 128, 64, 64, 32)};

// The two mma.sync templates share their kernel (parts/mma_gemm_kernel.cuh), which takes its name
// from KERNEL.
TemplateValues mmaGemmValues(const std::string &id, const std::string &kernel, const Target &t)
{
    TemplateValues v = gemmValues(id, t);
    v["KERNEL"] = kernel;
    return v;
}

// PROMOTE K tiles go in each tensor-core chunk of the 3xTF32 mma.sync product, added then to an
// fp32 register sum; 0 keeps all of K on the tensor cores (up to kLongestTensorCoreSum).
std::vector<ParamDim> tf32x3Space()
{
    std::vector<ParamDim> dims = tileSpace(kTf32x3Tiles, kMmaMeanings);
    dims.push_back({"PROMOTE", {0, 16}, "K tiles summed on the tensor cores before each fp32 promotion (0: all)"});
    return dims;
}

std::string tf32x3Fits(const Target &t, const Point &p)
{
    if (auto why = mmaFits(t, kTf32x3Tiles, p); !why.empty())
        return why;
    const std::int64_t k = gemm(t).spec->k, tilesK = cdiv(k, p.at("BK"));
    // A tail can multiply the product's relative error (two products multiplied): a quarter of the
    // K then (measured on an H200: two products of K = 2048 multiplied, 1.31e-4 unpromoted).
    const std::int64_t longest = t.pattern.feedsTail ? kLongestTensorCoreSum / 4 : kLongestTensorCoreSum;
    if (p.at("PROMOTE") == 0)
        return k > longest ? "K = " + std::to_string(k) + " summed on the tensor cores alone loses too much to their " +
                "truncating accumulation" + (t.pattern.feedsTail ? " before a tail" : "") +
                " (PROMOTE > 0 adds the chunks in fp32)"
                           : std::string();
    if (tilesK <= p.at("PROMOTE"))
        return "K fits one tensor-core chunk of PROMOTE tiles already";
    // A second 64x64 set of sums next to the accumulators does not fit in 255 registers.
    if (p.at("WM") * p.at("WN") > 64 * 32)
        return "a separate fp32 sum leaves too few registers for a 64x64 warp tile";
    return {};
}

// An mma.sync product: tensor-core rate `peak` at `fraction` for the benchmarked tile.
Estimate mmaEstimate(const Target &t, const Point &p, double peak, double fraction, double reference, int smem,
                     const std::string &how)
{
    const Gemm g = gemm(t);
    const int bm = p.at("BM"), bn = p.at("BN");
    const int threads = (bm / p.at("WM")) * (bn / p.at("WN")) * 32;
    const double tiles = double(cdiv(g.spec->m, bm)) * double(cdiv(g.spec->n, bn)) * double(g.batch);
    const int perSm =
        residentBlocks(t, threads, 65536 / (threads * std::max(p.at("MIN_BLOCKS"), 1)), smem, p.at("MIN_BLOCKS"));
    return computeEstimate(t, gemmFlops(g), peak, fraction * tileFit(g.spec->m, g.spec->n, bm, bn, reference), tiles,
                           threads, perSm, how + " for the " + operandsText(t) + " product");
}

// The wgmma template: consumer warpgroups (64 rows each), tile columns, ring stages, K steps per
// tensor-core accumulation chunk.
TileShape wg(int wgs, int bn, int stages, int promote)
{
    return {{"WGS", wgs}, {"BN", bn}, {"STAGES", stages}, {"PROMOTE", promote}};
}
const std::vector<std::string> kWgmmaMeanings{"consumer warpgroups (64 rows each)", "block tile columns",
                                              "bulk-copy ring stages",
                                              "K steps (128 bytes deep) per tensor-core chunk (65536: all of K)",
                                              "block-rows per L2 group"};
// Shapes that compile without spills for both splits (ptxas, sm_90a).
// The last ones promote every step, for products that go on to a tail (wgmmaFits).
const std::vector<TileShape> kWgmmaTiles{wg(2, 128, 3, 4), wg(2, 128, 3, 8), wg(2, 128, 3, 2), wg(1, 128, 4, 4),
                                         wg(2, 64, 4, 4),  wg(2, 96, 3, 4),  wg(2, 96, 3, 8),  wg(1, 128, 4, 8),
                                         wg(2, 128, 3, 1), wg(2, 64, 4, 1),  wg(2, 96, 3, 1)};
// Under the loose policy the tensor cores may sum all of K in one chunk: without the fp32 register
// sum a consumer has the registers for a 256-column tile (154-156 registers, no spills), which
// halves the shared-memory traffic per product. The strict shapes follow, for short searches
// that start from the estimate.
constexpr int kAllOfK = 65536;
const std::vector<TileShape> kLooseWgmmaTiles = [] {
    std::vector<TileShape> tiles{wg(2, 256, 4, kAllOfK), wg(2, 256, 3, kAllOfK), wg(2, 128, 6, kAllOfK),
                                 wg(2, 128, 4, kAllOfK)};
    tiles.insert(tiles.end(), kWgmmaTiles.begin(), kWgmmaTiles.end());
    return tiles;
}();

// With A read as fp32 by the product and rounded in registers, a stage holds A's fp32 rows (320
// bytes a row with padding for 16-bit products, 192 for TF32): fewer stages fit.
const std::vector<TileShape> kRegsWgmmaTiles{wg(2, 128, 3, 4), wg(2, 128, 3, 8), wg(2, 64, 4, 4),  wg(1, 128, 4, 4),
                                             wg(2, 96, 3, 4),  wg(2, 128, 3, 2), wg(1, 128, 4, 8), wg(2, 128, 3, 1),
                                             wg(2, 64, 4, 1),  wg(2, 96, 3, 1)};
// 3xTF32 fragments take twice the registers: 128-column tiles of two warpgroups spill there.
const std::vector<TileShape> kTf32RegsWgmmaTiles{wg(2, 96, 4, 4),  wg(2, 64, 4, 4), wg(1, 128, 4, 4), wg(2, 96, 3, 4),
                                                 wg(1, 128, 4, 8), wg(2, 96, 4, 1), wg(2, 64, 4, 1),  wg(1, 128, 4, 1)};
const std::vector<TileShape> kLooseRegsWgmmaTiles = [] {
    std::vector<TileShape> tiles{wg(2, 256, 3, kAllOfK), wg(2, 128, 4, kAllOfK), wg(1, 256, 4, kAllOfK),
                                 wg(2, 128, 3, kAllOfK)};
    tiles.insert(tiles.end(), kRegsWgmmaTiles.begin(), kRegsWgmmaTiles.end());
    return tiles;
}();

// The operands of a wgmma product: 3xTF32 or 3xbf16 (strict), single-pass TF32 or fp16 (loose);
// the ARegs forms read A as fp32 and round it in registers, so only B is re-laid.
enum class WgmmaOperands { Tf32x3, Bf16x3, Tf32, Fp16, Tf32x3ARegs, Bf16x3ARegs, Fp16ARegs };
bool aRegs(WgmmaOperands o)
{
    return o == WgmmaOperands::Tf32x3ARegs || o == WgmmaOperands::Bf16x3ARegs || o == WgmmaOperands::Fp16ARegs;
}
bool strictOperands(WgmmaOperands o)
{
    return o == WgmmaOperands::Tf32x3 || o == WgmmaOperands::Bf16x3 || o == WgmmaOperands::Tf32x3ARegs ||
        o == WgmmaOperands::Bf16x3ARegs;
}
bool sixteenBit(WgmmaOperands o)
{
    return o != WgmmaOperands::Tf32x3 && o != WgmmaOperands::Tf32 && o != WgmmaOperands::Tf32x3ARegs;
}
bool bf16x3(WgmmaOperands o) { return o == WgmmaOperands::Bf16x3 || o == WgmmaOperands::Bf16x3ARegs; }
int splitOf(WgmmaOperands o) { return strictOperands(o) ? 3 : 1; }
const std::vector<TileShape> &wgmmaTiles(WgmmaOperands o)
{
    if (o == WgmmaOperands::Tf32x3ARegs)
        return kTf32RegsWgmmaTiles;
    if (aRegs(o))
        return strictOperands(o) ? kRegsWgmmaTiles : kLooseRegsWgmmaTiles;
    return strictOperands(o) ? kWgmmaTiles : kLooseWgmmaTiles;
}

std::vector<ParamDim> wgmmaSpace(WgmmaOperands o)
{
    std::vector<ParamDim> dims = tileSpace(wgmmaTiles(o), kWgmmaMeanings);
    dims.push_back({"GROUP_M", {8, 16, 4}, kWgmmaMeanings.back()});
    return dims;
}

// The bytes of one ring stage (gemm_wgmma.cu's kStageBytes): A's parts or its fp32 rows (a K
// step of 64 or 32 values and 16 of padding), then B's parts.
int wgmmaStageBytes(const Point &p, WgmmaOperands o)
{
    const int parts = splitOf(o) == 3 ? 2 : 1, rows = 64 * p.at("WGS");
    const int rowFloats = (sixteenBit(o) ? 64 : 32) + 16;
    return (aRegs(o) ? rows * rowFloats * 4 : parts * rows * 128) + parts * p.at("BN") * 128;
}

int wgmmaSmem(const Point &p, WgmmaOperands o) { return p.at("STAGES") * wgmmaStageBytes(p, o) + 2048; }

std::string wgmmaFits(const Target &t, const Point &p, WgmmaOperands o)
{
    if (auto why = tileListed(wgmmaTiles(o), p); !why.empty())
        return why;
    // A tail can turn the product's absolute error into relative error (exp of scores, a row
    // divided by its norm where tanh has flattened most values): there the tensor cores' truncating
    // sums get one 32-deep step at a time. Measured on an H200 before this rule, a batched product,
    // tanh and an L2 norm: 1.25e-4 with PROMOTE=4, over the strict 1e-4; each step's chunk then
    // holds 12 truncating accumulations instead of 48.
    if (bf16x3(o))
        if (auto why = bf16x3Fits(t, "a product"); !why.empty())
            return why;
    if (strictOperands(o) && t.pattern.feedsTail && p.at("PROMOTE") != 1)
        return "a product that goes on to a tail is promoted every K step (PROMOTE = 1)";
    const int smem = wgmmaSmem(p, o);
    if (smem > t.smemPerBlock)
        return std::to_string(smem) + " bytes of shared memory exceed the " + std::to_string(t.smemPerBlock) +
            " a block may have";
    return {};
}

// Slices of K for the wgmma product: when the output has fewer tiles than the GPU has SMs (a long
// K, few rows and columns), enough slices to fill them, each at least 8 K steps deep and one
// tensor-core chunk (no slices when a chunk is all of K).
std::int64_t wgmmaSplitK(const Target &t, const Point &p, WgmmaOperands o)
{
    const Gemm g = gemm(t);
    const std::int64_t tiles = cdiv(g.spec->m, 64 * p.at("WGS")) * cdiv(g.spec->n, p.at("BN")) * g.batch;
    const int kPerStep = sixteenBit(o) ? 64 : 32;
    const std::int64_t most = std::max<std::int64_t>(1, cdiv(g.spec->k, kPerStep) / std::max(8, p.at("PROMOTE")));
    return std::clamp<std::int64_t>(t.sms / std::max<std::int64_t>(tiles, 1), 1, std::min<std::int64_t>(most, 65535));
}

TemplateValues wgmmaValues(const Target &t, const Point &p, WgmmaOperands o)
{
    const Gemm g = gemm(t);
    TemplateValues v = gemmValues("gemm_wgmma", t);
    const std::int64_t ksplit = wgmmaSplitK(t, p, o), outputs = g.batch * g.spec->m * g.spec->n;
    v["KSPLIT"] = std::to_string(ksplit);
    v["SPLITK"] = ksplit > 1 ? "1" : "0";
    v["SUM_WORDS"] = std::to_string(ksplit > 1 ? ksplit * outputs : 1); // one unused word without a split
    v["COMBINE_GRID"] = std::to_string(cdiv(outputs, 256));
    // With A in registers the pass lays out B alone.
    v["A_IMAGES"] = std::to_string(aRegs(o) ? 0 : g.strideA ? g.batch : 1);
    v["A_REGS"] = aRegs(o) ? "1" : "0";
    v["STAGE_BYTES"] = std::to_string(wgmmaStageBytes(p, o));
    v["B_IMAGES"] = std::to_string(g.strideB ? g.batch : 1);
    v["SPLIT"] = std::to_string(splitOf(o));
    v["HALF"] = sixteenBit(o) ? "1" : "0";
    v["BF16"] = bf16x3(o) ? "1" : "0";
    v["PRECISION"] = o == WgmmaOperands::Tf32 ? "tf32" : sixteenBit(o) ? (bf16x3(o) ? "bf16x3" : "fp16") : "tf32x3";
    return v;
}

std::string wgmmaApplies(const Target &t)
{
    if (t.major < 9)
        return "wgmma and bulk copies need a Hopper GPU (sm_90)";
    return gemmApplies(t);
}

// The A-in-registers forms have not been timed on a GPU yet (checked on the host emulator only):
// until they are, the model puts them just under the re-laid forms' measured fractions, so that a
// short search measures those first and these in the slots left.
constexpr double kUnmeasuredARegs = 0.97;

// The A-in-registers forms read A where it lies: rows of 16 bytes, not transposed.
std::string aRegsApplies(const Target &t)
{
    if (auto why = wgmmaApplies(t); !why.empty())
        return why;
    const Gemm g = gemm(t);
    if (auto why = rowsOfA(g); !why.empty())
        return why;
    if (g.spec->k % 4 != 0 || g.strideA % 4 != 0)
        return "A's rows are not whole 16-byte chunks (K = " + std::to_string(g.spec->k) + ")";
    return {};
}

Estimate wgmmaEstimate(const Target &t, const Point &p, WgmmaOperands o, double peak, double fraction,
                       const std::string &how)
{
    const Gemm g = gemm(t);
    const int bm = 64 * p.at("WGS"), bn = p.at("BN");
    const double tiles =
        double(cdiv(g.spec->m, bm)) * double(cdiv(g.spec->n, bn)) * double(g.batch) * double(wgmmaSplitK(t, p, o));
    // `fraction` was measured with the re-layout pass included, so it is not counted apart.
    return computeEstimate(t, gemmFlops(g), peak, fraction * tileFit(g.spec->m, g.spec->n, bm, bn, 64), tiles,
                           128 * (p.at("WGS") + 1), 1, how + " for the " + operandsText(t) + " product");
}

} // namespace

void addGemm(std::vector<IdeaDef> &out)
{
    const std::vector<PatternKind> kinds{PatternKind::Matmul};

    out.push_back(IdeaDef{
        .id = "gemm_tiled_fp32",
        .title = "Shared-memory tiles with register tiling (fp32)",
        .text = "Each block computes a BMxBN tile of the product and each thread a TMxTN register tile of it, "
                "made of 4x4 sub-tiles spread over the block tile so that 16-byte shared-memory reads are "
                "conflict-free. BK-deep slices of A and B are loaded with 16-byte loads one step ahead into "
                "registers and stored into the other of two shared stages, so one barrier per step suffices. "
                "Every product is an fp32 FMA: strict accuracy at the CUDA cores' fp32 rate. The bias and the "
                "elementwise epilogue are applied to the accumulators before the single store.",
        .patterns = kinds,
        .space = tileSpace(kSimtTiles, kSimtMeanings),
        .repairOrder = {"BK", "BM", "TN"},
        .applies = gemmApplies,
        .check = [](const Target &t, const Point &p) -> std::string {
            if (auto why = tileListed(kSimtTiles, p); !why.empty())
                return why;
            return copiesFit(t, p, (p.at("BM") / p.at("TM")) * (p.at("BN") / p.at("TN")), true);
        },
        .estimate =
            [](const Target &t, const Point &p) {
                const Gemm g = gemm(t);
                const int bm = p.at("BM"), bn = p.at("BN"), tm = p.at("TM"), tn = p.at("TN");
                const int threads = (bm / tm) * (bn / tn);
                const double tiles = double(cdiv(g.spec->m, bm)) * double(cdiv(g.spec->n, bn)) * double(g.batch);
                const int smem = 2 * p.at("BK") * (bm + bn + 8) * 4;
                const int perSm = residentBlocks(t, threads, tm * tn + tm + tn + 48, smem, 0);
                return computeEstimate(
                    t, gemmFlops(g), kFp32Tflops, 0.6 * tileFit(g.spec->m, g.spec->n, bm, bn, 64), tiles, threads,
                    perSm, "computes the " + operandsText(t) + " product with fp32 FMAs from shared-memory tiles");
            },
        .values = [](const Target &t, const Point &) { return gemmValues("gemm_tiled_fp32", t); },
    });

    out.push_back(IdeaDef{
        .id = "gemm_mma_tf32x3",
        .title = "Tensor cores with a compensated 3xTF32 split",
        .text = "Run the product on the tensor cores without losing fp32 accuracy: split every operand into a TF32 "
                "high part and a TF32 remainder (a = a_hi + a_lo) and accumulate a_lo*b_hi + a_hi*b_lo + a_hi*b_hi "
                "in fp32 with mma.sync.m16n8k8, dropping only a_lo*b_lo (about 2^-22 relative). Tiles move "
                "through a multi-stage cp.async pipeline into padded shared memory and reach the warps through "
                "ldmatrix; blocks walk the output in L2-friendly groups of rows. Three tensor-core passes per "
                "product, still several times the CUDA cores' fp32 rate. Tensor-core accumulation truncates, "
                "so for a long K each PROMOTE tiles are summed there and then added to an fp32 register sum.",
        .patterns = kinds,
        .needs = {"gemm_tiled_fp32"},
        .space = tf32x3Space(),
        .repairOrder = {"STAGES", "BK", "BN"},
        .applies = mmaApplies,
        .check = tf32x3Fits,
        .estimate =
            [](const Target &t, const Point &p) {
                return mmaEstimate(t, p, kTf32Tflops / 3, 0.31, 64, mmaSmem(p),
                                   "makes three TF32 tensor-core passes (3xTF32)");
            },
        .values = [](const Target &t, const Point &) { return mmaGemmValues("gemm_mma_tf32x3", "gemm_tf32x3", t); },
    });

    out.push_back(IdeaDef{
        .id = "gemm_wgmma_tf32x3",
        .title = "Hopper warpgroup tensor cores (wgmma) fed by bulk copies, 3xTF32",
        .text = "Move the compensated 3xTF32 product to Hopper's asynchronous warpgroup MMA. A first pass "
                "splits both operands into TF32 high and low parts and lays them out as the tensor cores read "
                "them (K-major 128-byte rows, swizzled, zero-padded to whole tiles); the product kernel then has "
                "one producer thread stream each tile with a single cp.async.bulk into a ring of shared-memory "
                "stages, completion counted on mbarriers, while WGS consumer warpgroups each issue "
                "wgmma.m64nBNk8 from shared memory: lo*hi + hi*lo + hi*hi. Because tensor-core accumulation "
                "truncates, only PROMOTE K steps are accumulated there before each chunk is added to an fp32 "
                "register sum.",
        .patterns = kinds,
        // On Hopper this is the fast strict path: a short search starts it in the first round, next
        // to the fp32 kernel (measured on real sizes, a round takes seconds); one with time to spare
        // measures the fp32 kernel and the mma.sync product first, a round each.
        .after = {"gemm_mma_tf32x3"},
        .space = wgmmaSpace(WgmmaOperands::Tf32x3),
        .repairOrder = {"STAGES", "BN", "PROMOTE"},
        .applies = wgmmaApplies,
        .check = [](const Target &t, const Point &p) { return wgmmaFits(t, p, WgmmaOperands::Tf32x3); },
        .estimate =
            [](const Target &t, const Point &p) {
                return wgmmaEstimate(t, p, WgmmaOperands::Tf32x3, kTf32Tflops / 3, 0.58,
                                     "makes three TF32 wgmma passes (3xTF32)");
            },
        .values = [](const Target &t, const Point &p) { return wgmmaValues(t, p, WgmmaOperands::Tf32x3); },
        .templateName = "gemm_wgmma",
    });

    out.push_back(IdeaDef{
        .id = "gemm_wgmma_bf16x3",
        .title = "Hopper warpgroup tensor cores (wgmma), 3xbf16 split",
        .text = "The compensated wgmma product at the 16-bit tensor-core rate: the re-layout pass splits each "
                "operand into two bf16 parts, hi = rn(x) and lo = rn(x - hi), about 16 significant bits with "
                "fp32's exponent range, and the product accumulates lo*hi + hi*lo + hi*hi with "
                "wgmma.m64nBNk16 in fp32. Each 128-byte tile row holds 64 values of K, so the three passes "
                "cost half of 3xTF32's and the images are half its bytes; the error left (about 1e-5 of the "
                "output's scale, against 1e-6 for 3xTF32) stays inside the strict tolerance. Chunks of "
                "PROMOTE K steps are added to an fp32 register sum, as for 3xTF32.",
        .patterns = kinds,
        // A search with time to spare measures 3xTF32 first, so the trajectory shows the step.
        .after = {"gemm_wgmma_tf32x3"},
        .space = wgmmaSpace(WgmmaOperands::Bf16x3),
        .repairOrder = {"STAGES", "BN", "PROMOTE"},
        .applies = wgmmaApplies,
        .check = [](const Target &t, const Point &p) { return wgmmaFits(t, p, WgmmaOperands::Bf16x3); },
        .estimate =
            [](const Target &t, const Point &p) {
                return wgmmaEstimate(t, p, WgmmaOperands::Bf16x3, kFp16Tflops / 3, 0.58,
                                     "makes three bf16 wgmma passes (3xbf16)");
            },
        .values = [](const Target &t, const Point &p) { return wgmmaValues(t, p, WgmmaOperands::Bf16x3); },
        .templateName = "gemm_wgmma",
    });

    out.push_back(IdeaDef{
        .id = "gemm_wgmma_tf32",
        .title = "Hopper warpgroup tensor cores (wgmma), single-pass TF32",
        .text = "The wgmma product with one TF32 pass: operands rounded to TF32 (to nearest) by the re-layout "
                "pass, streamed by bulk copies, multiplied by wgmma.m64nBNk8 and promoted to an fp32 sum every "
                "PROMOTE K steps, or, in 256-column tiles, summed there over all of K. About 1e-3 relative error "
                "per product: loose tolerance only.",
        .patterns = kinds,
        .needs = {"gemm_mma_tf32"},
        .space = wgmmaSpace(WgmmaOperands::Tf32),
        .repairOrder = {"STAGES", "BN", "PROMOTE"},
        .applies = [](const Target &t) -> std::string {
            if (auto why = needsLoose(t, "single-pass TF32 (about 1e-3 relative error)"); !why.empty())
                return why;
            return wgmmaApplies(t);
        },
        .check = [](const Target &t, const Point &p) { return wgmmaFits(t, p, WgmmaOperands::Tf32); },
        .estimate =
            [](const Target &t, const Point &p) {
                return wgmmaEstimate(t, p, WgmmaOperands::Tf32, kTf32Tflops, 0.48, "makes one TF32 wgmma pass");
            },
        .values = [](const Target &t, const Point &p) { return wgmmaValues(t, p, WgmmaOperands::Tf32); },
        .templateName = "gemm_wgmma",
    });

    out.push_back(IdeaDef{
        .id = "gemm_wgmma_fp16",
        .title = "Hopper warpgroup tensor cores (wgmma) on fp16 operands",
        .text = "The wgmma product on fp16: the re-layout pass rounds both fp32 operands to fp16 (the problem's "
                "tensors stay fp32), so each 128-byte tile row holds 64 values of K instead of 32 and "
                "wgmma.m64nBNk16 runs at twice the TF32 rate, accumulating in fp32; 256-column tiles sum all of K "
                "on the tensor cores. About 5e-4 relative error per operand, like TF32 (loose tolerance only; "
                "values beyond fp16's range, 65504, would overflow).",
        .patterns = kinds,
        .needs = {"gemm_tiled_fp32"},
        .after = {"gemm_mma_fp16"},
        .space = wgmmaSpace(WgmmaOperands::Fp16),
        .repairOrder = {"STAGES", "BN", "PROMOTE"},
        .applies = [](const Target &t) -> std::string {
            if (auto why = needsLoose(t, "an fp16 product (about 5e-4 relative error per operand)"); !why.empty())
                return why;
            return wgmmaApplies(t);
        },
        .check = [](const Target &t, const Point &p) { return wgmmaFits(t, p, WgmmaOperands::Fp16); },
        .estimate =
            [](const Target &t, const Point &p) {
                return wgmmaEstimate(t, p, WgmmaOperands::Fp16, kFp16Tflops, 0.48, "makes one fp16 wgmma pass");
            },
        .values = [](const Target &t, const Point &p) { return wgmmaValues(t, p, WgmmaOperands::Fp16); },
        .templateName = "gemm_wgmma",
    });

    out.push_back(IdeaDef{
        .id = "gemm_wgmma_tf32x3_regs",
        .title = "wgmma 3xTF32 with A split in registers",
        .text = "The 3xTF32 wgmma product without re-laying A: the producer warpgroup copies A's fp32 rows "
                "straight into padded shared-memory rows (cp.async, edges zero-filled), and each consumer reads "
                "its fragments of every 16-deep slice (two k8 calls) as one 16-byte load a row, splits them into "
                "TF32 hi and lo in registers and issues wgmma with A from registers (lo*hi + hi*lo + hi*hi), the "
                "next slice read while the current one multiplies. Only B goes through the re-layout pass, its "
                "K permuted inside each slice to match the fragments: the pass moves half the bytes. Chunks of "
                "PROMOTE K steps are added to an fp32 register sum.",
        .patterns = kinds,
        // A search with time to spare measures the re-laid form first, so the trajectory shows the step.
        .after = {"gemm_wgmma_tf32x3"},
        .space = wgmmaSpace(WgmmaOperands::Tf32x3ARegs),
        .repairOrder = {"STAGES", "BN", "PROMOTE"},
        .applies = aRegsApplies,
        .check = [](const Target &t, const Point &p) { return wgmmaFits(t, p, WgmmaOperands::Tf32x3ARegs); },
        .estimate =
            [](const Target &t, const Point &p) {
                return wgmmaEstimate(t, p, WgmmaOperands::Tf32x3ARegs, kTf32Tflops / 3, kUnmeasuredARegs * 0.58,
                                     "makes three TF32 wgmma passes (3xTF32), A split in registers");
            },
        .values = [](const Target &t, const Point &p) { return wgmmaValues(t, p, WgmmaOperands::Tf32x3ARegs); },
        .templateName = "gemm_wgmma",
    });

    out.push_back(IdeaDef{
        .id = "gemm_wgmma_bf16x3_regs",
        .title = "wgmma 3xbf16 with A split in registers",
        .text = "The 3xbf16 wgmma product without re-laying A: the producer warpgroup copies A's fp32 rows "
                "straight into padded shared-memory rows (cp.async, edges zero-filled), and each consumer reads "
                "its fragment of every 16-deep slice as one 16-byte load a row, splits it into bf16 hi and lo in "
                "registers and issues wgmma with A from registers (lo*hi + hi*lo + hi*hi), the next slice read "
                "while the current one multiplies. Only B goes through the re-layout pass, with K permuted inside "
                "each slice to match the fragment's order, so the pass moves half the bytes.",
        .patterns = kinds,
        // A search with time to spare measures the re-laid form first, so the trajectory shows the step.
        .after = {"gemm_wgmma_bf16x3"},
        .space = wgmmaSpace(WgmmaOperands::Bf16x3ARegs),
        .repairOrder = {"STAGES", "BN", "PROMOTE"},
        .applies = aRegsApplies,
        .check = [](const Target &t, const Point &p) { return wgmmaFits(t, p, WgmmaOperands::Bf16x3ARegs); },
        .estimate =
            [](const Target &t, const Point &p) {
                return wgmmaEstimate(t, p, WgmmaOperands::Bf16x3ARegs, kFp16Tflops / 3, kUnmeasuredARegs * 0.58,
                                     "makes three bf16 wgmma passes (3xbf16), A split in registers");
            },
        .values = [](const Target &t, const Point &p) { return wgmmaValues(t, p, WgmmaOperands::Bf16x3ARegs); },
        .templateName = "gemm_wgmma",
    });

    out.push_back(IdeaDef{
        .id = "gemm_wgmma_fp16_regs",
        .title = "wgmma on fp16 with A rounded in registers",
        .text = "The fp16 wgmma product without re-laying A: the producer warpgroup copies A's fp32 rows straight "
                "into padded shared-memory rows, and each consumer reads its fragment of every 16-deep slice as "
                "one 16-byte load a row, rounds it to fp16 in registers and issues wgmma with A from registers, "
                "the next slice read while the current one multiplies. Only B is rounded and re-laid by the pass "
                "(K permuted inside each slice to match the fragment), half the pass's bytes. Loose tolerance "
                "only, as every fp16 product.",
        .patterns = kinds,
        .needs = {"gemm_tiled_fp32"},
        .after = {"gemm_wgmma_fp16"},
        .space = wgmmaSpace(WgmmaOperands::Fp16ARegs),
        .repairOrder = {"STAGES", "BN", "PROMOTE"},
        .applies = [](const Target &t) -> std::string {
            if (auto why = needsLoose(t, "an fp16 product (about 5e-4 relative error per operand)"); !why.empty())
                return why;
            return aRegsApplies(t);
        },
        .check = [](const Target &t, const Point &p) { return wgmmaFits(t, p, WgmmaOperands::Fp16ARegs); },
        .estimate =
            [](const Target &t, const Point &p) {
                return wgmmaEstimate(t, p, WgmmaOperands::Fp16ARegs, kFp16Tflops, kUnmeasuredARegs * 0.48,
                                     "makes one fp16 wgmma pass, A rounded in registers");
            },
        .values = [](const Target &t, const Point &p) { return wgmmaValues(t, p, WgmmaOperands::Fp16ARegs); },
        .templateName = "gemm_wgmma",
    });

    out.push_back(IdeaDef{
        .id = "gemm_mma_tf32",
        .title = "Single-pass TF32 tensor cores",
        .text = "Round each fp32 operand to TF32 (11 significant bits) and multiply once on the tensor cores with "
                "mma.sync.m16n8k8, accumulating in fp32: about 1e-3 relative error per product, inside the loose "
                "tolerance but not the strict one, at three times the rate of the compensated split. Same "
                "cp.async pipeline, padded shared memory and grouped block order.",
        .patterns = kinds,
        .needs = {"gemm_tiled_fp32"},
        .space = tileSpace(kTf32Tiles, kMmaMeanings),
        .repairOrder = {"STAGES", "BN", "BM"},
        .applies = [](const Target &t) -> std::string {
            if (auto why = needsLoose(t, "single-pass TF32 (about 1e-3 relative error)"); !why.empty())
                return why;
            return mmaApplies(t);
        },
        .check = [](const Target &t, const Point &p) { return mmaFits(t, kTf32Tiles, p); },
        .estimate =
            [](const Target &t, const Point &p) {
                return mmaEstimate(t, p, kTf32Tflops, 0.29, 256.0 / 3, mmaSmem(p), "makes one TF32 tensor-core pass");
            },
        .values = [](const Target &t, const Point &) { return mmaGemmValues("gemm_mma_tf32", "gemm_tf32", t); },
    });

    out.push_back(IdeaDef{
        .id = "gemm_mma_fp16",
        .title = "FP16 tensor cores with fp32 accumulation",
        .text = "Read the fp32 operands with 16-byte loads one tile ahead, round them to fp16 as they are stored "
                "into shared memory, and multiply with mma.sync.m16n8k16 accumulating in fp32: the tensor cores' "
                "fp16 rate, about 5e-4 relative error per operand (loose tolerance only; values beyond fp16's "
                "range would overflow).",
        .patterns = kinds,
        .needs = {"gemm_tiled_fp32"},
        .space = tileSpace(kFp16Tiles, kHalfMeanings),
        .repairOrder = {"BK", "BN"},
        .applies = [](const Target &t) -> std::string {
            if (auto why = needsLoose(t, "an fp16 product (about 5e-4 relative error per operand)"); !why.empty())
                return why;
            return mmaApplies(t);
        },
        .check = [](const Target &t, const Point &p) -> std::string {
            if (auto why = tileListed(kFp16Tiles, p); !why.empty())
                return why;
            // ptxas spills the 128x256 tile's registers when B is stored [N, K], and 4-byte loads
            // (rows not a multiple of 4 floats) overflow the register budget of every tile.
            const Gemm g = gemm(t);
            if (p.at("BN") == 256 && g.spec->transB)
                return "the 128x256 tile spills with a transposed B";
            if (g.spec->k % 4 != 0 || (!g.spec->transB && g.spec->n % 4 != 0) || g.strideA % 4 != 0 ||
                g.strideB % 4 != 0)
                return "rows that are not a multiple of 4 floats need 4-byte loads, which spill";
            const int threads = (p.at("BM") / p.at("WM")) * (p.at("BN") / p.at("WN")) * 32;
            return copiesFit(t, p, threads, true);
        },
        .estimate =
            [](const Target &t, const Point &p) {
                const int bm = p.at("BM"), bn = p.at("BN"), bk = p.at("BK");
                const int smem = 2 * (bm * (bk + 8) + bk * bn + 8 * bk + 8 * bn) * 2;
                return mmaEstimate(t, p, kFp16Tflops, 0.2, 256.0 / 3, smem, "makes one fp16 tensor-core pass");
            },
        .values = [](const Target &t, const Point &) { return gemmValues("gemm_mma_fp16", t); },
    });
}

} // namespace kf::builtin::ideas
