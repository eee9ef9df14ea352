// Convolutions of 1, 2 and 3 dims (groups 1, any stride, padding and dilation) as an implicit
// GEMM on the tensor cores, with the bias and elementwise epilogue: 3xTF32 (fp32-accurate) or,
// under the loose policy, single-pass TF32; and with a 2-D max pooling after it, the pooling fused
// into the epilogue. The mma.sync ideas and the wgmma one with its operand in registers take
// transposed convolutions too, one GEMM per output phase (parts/conv_phases.cuh).
#include "gen/builtin/ideas_conv.h"

#include <algorithm>
#include <array>
#include <climits>

namespace kf::builtin::ideas {

namespace {

constexpr double kTf32Tflops = 494; // dense H200 rate

// The most taps of one dim that feed one output phase of a transposed convolution: those k with
// (phase + pad - k * dil) divisible by the stride (phase_dim in parts/conv_phases.cuh).
std::int64_t mostPhaseTaps(std::int64_t stride, std::int64_t pad, std::int64_t dil, std::int64_t k)
{
    std::int64_t most = 0;
    for (std::int64_t phase = 0; phase < stride; ++phase) {
        std::int64_t n = 0;
        for (std::int64_t j = 0; j < k; ++j)
            n += (phase + pad - j * dil) % stride == 0;
        most = std::max(most, n);
    }
    return most;
}

} // namespace

std::string convOperands(const Target &t)
{
    const Pattern &p = t.pattern;
    if (p.outDtype != DType::F32)
        return "the result is " + toString(p.outDtype) + ", not float32";
    const TensorSpec *x = t.problem ? t.problem->tensor(p.conv->x) : nullptr;
    const TensorSpec *w = t.problem ? t.problem->tensor(p.conv->weight) : nullptr;
    if (!x || !w)
        return "an operand is not a tensor of the problem";
    if (x->dtype != DType::F32 || w->dtype != DType::F32)
        return "an operand is not float32";
    return {};
}

std::string poolPassTakes(const Target &t)
{
    const PoolSpec &s = *t.pattern.pool;
    if (s.dilation[0] != 1 || s.dilation[1] != 1)
        return "dilated pooling is not fused";
    if (s.ceilMode)
        return "ceil_mode pooling is not fused";
    if (s.outShape.size() != 4)
        return "the pooled output is not 4-D";
    return {};
}

namespace {

// `transposedToo`: the mma.sync ideas and conv_wgmma_regs gather transposed convolutions phase by
// phase; the other wgmma ones do not.
std::string convOf(const Target &t, Conv &c, bool transposedToo = false)
{
    const Pattern &p = t.pattern;
    if (!p.conv)
        return "the pattern has no convolution";
    const ConvSpec &s = *p.conv;
    if (s.transposed && !transposedToo)
        return "a transposed convolution (the mma.sync implicit GEMMs, conv_wgmma_regs and the direct convolution take "
               "it)";
    if (s.groups != 1)
        return "grouped convolution (groups = " + std::to_string(s.groups) + ") is left to the direct convolution";
    if (auto why = convOperands(t); !why.empty())
        return why;
    const TensorSpec *x = t.problem->tensor(s.x), *w = t.problem->tensor(s.weight);
    const std::size_t rank = std::size_t(s.dims) + 2;
    if (x->shape.size() != rank || w->shape.size() != rank || s.outShape.size() != rank)
        return "only batched inputs are supported";
    // A transposed convolution's weight is [in][out][taps].
    c.transposed = s.transposed;
    c.batch = x->shape[0], c.inC = x->shape[1], c.outC = w->shape[s.transposed ? 1 : 0];
    // Spatial dims right-aligned into (depth, height, width); those a convolution lacks stay 1.
    std::int64_t *in[3] = {&c.inD, &c.inH, &c.inW}, *k[3] = {&c.kd, &c.kh, &c.kw},
                 *out[3] = {&c.outD, &c.outH, &c.outW};
    std::int64_t *stride[3] = {&c.strideD, &c.strideH, &c.strideW}, *pad[3] = {&c.padD, &c.padH, &c.padW};
    std::int64_t *dil[3] = {&c.dilD, &c.dilH, &c.dilW};
    for (int j = 0; j < s.dims; ++j) {
        const int at = 3 - s.dims + j;
        *in[at] = x->shape[2 + j], *k[at] = w->shape[2 + j], *out[at] = s.outShape[2 + j];
        *stride[at] = s.stride[j], *pad[at] = s.pad[j], *dil[at] = s.dilation[j];
    }
    if (w->shape[s.transposed ? 0 : 1] != c.inC)
        return "the weight's input channels do not match the input";
    if (c.transposed)
        c.phaseTaps = mostPhaseTaps(c.strideD, c.padD, c.dilD, c.kd) * mostPhaseTaps(c.strideH, c.padH, c.dilH, c.kh) *
            mostPhaseTaps(c.strideW, c.padW, c.dilW, c.kw);
    if (numel(x->shape) >= INT_MAX || double(c.gemmM()) * double(c.outC) >= double(INT_MAX))
        return "the tensors are too large for 32-bit offsets";
    // The templates pack a tap's shifts in one int (parts/conv_taps.cuh): 2-D, the row's above the
    // column's 16 bits; 3-D, 10, 11 and 11 bits. A transposed phase's corners reach (k - 1) * dil
    // before the input, not the padding.
    const std::int64_t reachD = c.transposed ? std::max(c.padD, (c.kd - 1) * c.dilD) : c.padD;
    const std::int64_t reachH = c.transposed ? std::max(c.padH, (c.kh - 1) * c.dilH) : c.padH;
    const bool fitsPacked = c.deep()
        ? (c.kd - 1) * c.dilD < 1023 && (c.kh - 1) * c.dilH < 2048 && (c.kw - 1) * c.dilW < 2048 &&
            c.inD + reachD <= 1023
        : (c.kh - 1) * c.dilH < 0x4000 && c.inH + reachH <= 0x4000 && (c.kw - 1) * c.dilW < 0x10000;
    if (!fitsPacked)
        return "the input or kernel is too large for the packed tap shifts";
    if (p.program.shape != s.outShape)
        return "the epilogue reshapes the convolution's output";
    return {};
}

} // namespace

Conv conv(const Target &t)
{
    Conv c;
    convOf(t, c, true);
    return c;
}

std::string plainConv(const Target &t, bool transposedToo)
{
    Conv c;
    if (auto why = convOf(t, c, transposedToo); !why.empty())
        return why;
    return t.pattern.pool ? "the pooling after the convolution is done by the pooling ideas" : "";
}

// The wgmma templates pool in a pass of their own: max or average.
std::string pooledConv(const Target &t)
{
    Conv c;
    if (auto why = convOf(t, c); !why.empty())
        return why;
    if (!t.pattern.pool)
        return "no pooling follows the convolution";
    return poolPassTakes(t);
}

namespace {

// conv_implicit_gemm_pool pools inside its tiles with atomic maxima: max pooling only.
std::string maxPooledConv(const Target &t)
{
    if (auto why = pooledConv(t); !why.empty())
        return why;
    return t.pattern.pool->max ? "" : "average pooling is not fused into the tiles (the wgmma ideas pool it)";
}

TileShape tile(int bm, int bn, int bk, int wm, int wn, int stages, int minBlocks)
{
    return {{"BM", bm}, {"BN", bn}, {"BK", bk}, {"WM", wm}, {"WN", wn}, {"STAGES", stages}, {"MIN_BLOCKS", minBlocks}};
}
const std::vector<std::string> kMeanings{"block tile of output pixels",
                                         "block tile of output channels",
                                         "taps per pipeline stage",
                                         "warp tile of pixels",
                                         "warp tile of channels",
                                         "cp.async pipeline stages",
                                         "blocks per SM the registers are sized for",
                                         "TF32 passes per product (3: compensated split)"};

// The 16-, 32- and 64-channel tiles are for convolutions with few output channels (transposed
// ones that double an image often have 16 to 64), which a 96-wide tile would mostly pad.
const std::vector<TileShape> kTf32x3Tiles{tile(128, 96, 32, 32, 48, 3, 2),  tile(128, 96, 16, 32, 48, 4, 2),
                                          tile(128, 96, 32, 32, 48, 3, 1),  tile(64, 96, 32, 32, 48, 4, 3),
                                          tile(128, 128, 32, 32, 64, 3, 1), tile(128, 32, 32, 32, 32, 3, 3),
                                          tile(128, 64, 32, 32, 32, 3, 2),  tile(128, 16, 32, 32, 16, 3, 3)};
const std::vector<TileShape> kTf32Tiles{tile(128, 96, 32, 32, 48, 3, 2), tile(128, 96, 16, 32, 48, 4, 2),
                                        tile(64, 96, 32, 32, 48, 3, 1),  tile(128, 128, 32, 64, 32, 3, 1),
                                        tile(128, 32, 32, 32, 32, 3, 3), tile(128, 64, 32, 32, 32, 3, 2),
                                        tile(128, 16, 32, 32, 16, 3, 3)};
const std::vector<TileShape> kPoolTiles = [] {
    std::vector<TileShape> v;
    for (int split : {3, 1})
        for (TileShape s :
             {tile(128, 96, 32, 32, 48, 3, 2), tile(128, 96, 16, 32, 48, 4, 2), tile(128, 96, 32, 32, 48, 3, 1)}) {
            s.push_back({"SPLIT", split});
            v.push_back(s);
        }
    return v;
}();

int convSmem(const Conv &c, const Point &p)
{
    const int bm = p.at("BM"), bn = p.at("BN"), bk = p.at("BK");
    return int(p.at("STAGES") * (bm + bn) * (bk + 4) * 4 + cdiv(c.tapsK(), bk) * bk * c.tapBytes() + bm * 16);
}

std::string fits(const Target &t, const std::vector<TileShape> &tiles, const Point &p)
{
    if (auto why = tileListed(tiles, p); !why.empty())
        return why;
    const Conv c = conv(t);
    // The templates' static checks: threads map onto the taps of the A gather and onto the
    // 16-byte (or, with taps not a multiple of 4 or a transposed weight, 4-byte) chunks of the
    // weight rows.
    const int bm = p.at("BM"), bn = p.at("BN"), bk = p.at("BK");
    const int threads = (bm / p.at("WM")) * (bn / p.at("WN")) * 32;
    const int chunks = bk / (!c.transposed && c.tapsK() % 4 == 0 ? 4 : 1);
    if (threads % bk != 0 || (bm * bk) % threads != 0)
        return "the A gather does not map the threads onto the taps";
    if (threads % chunks != 0 || bn % (threads / chunks) != 0)
        return "weight tile copies do not spread evenly over " + std::to_string(threads) + " threads";
    if (p.count("SPLIT") && bn * (bm + 4) > p.at("STAGES") * (bm + bn) * (bk + 4))
        return "the conv tile does not fit where the pipeline stages were";
    const int smem = convSmem(c, p);
    if (smem > t.smemPerBlock)
        return std::to_string(smem) + " bytes of shared memory (stages and tap table) exceed the " +
            std::to_string(t.smemPerBlock) + " a block may have";
    return {};
}

// `fraction`: of the TF32 rate, as the template reached it at its 128x96 tile on the seed conv.
Estimate convEstimate(const Target &t, const Point &p, double peak, double fraction, const std::string &how)
{
    const Conv c = conv(t);
    const int bm = p.at("BM"), bn = p.at("BN");
    const int threads = (bm / p.at("WM")) * (bn / p.at("WN")) * 32;
    const double tiles = double(cdiv(c.rowsM(), bm)) * double(c.phases()) * double(cdiv(c.outC, bn));
    const double used =
        double(std::min<std::int64_t>(c.rowsM(), bm)) * double(std::min<std::int64_t>(c.outC, bn)) / (double(bm) * bn);
    const double reuse = std::min(1.0, double(bm) * bn / (bm + bn) / (128.0 * 96 / 224));
    const int smem = convSmem(c, p);
    const int perSm = std::max(1, std::min({p.at("MIN_BLOCKS"), 2048 / threads, t.smemPerSm / (smem + 1024)}));
    return computeEstimate(t, c.flops(), peak, fraction * used * reuse, tiles, threads, perSm, how + c.gemmText());
}

} // namespace

TemplateValues convValues(const std::string &id, const Target &t)
{
    const Conv c = conv(t);
    const ConvSpec &s = *t.pattern.conv;
    TemplateValues v{
        {"BATCH", std::to_string(c.batch)},
        {"IN_C", std::to_string(c.inC)},
        {"IN_D", std::to_string(c.inD)},
        {"IN_H", std::to_string(c.inH)},
        {"IN_W", std::to_string(c.inW)},
        {"OUT_C", std::to_string(c.outC)},
        {"KD", std::to_string(c.kd)},
        {"KH", std::to_string(c.kh)},
        {"KW", std::to_string(c.kw)},
        {"STRIDE_D", std::to_string(c.strideD)},
        {"STRIDE_H", std::to_string(c.strideH)},
        {"STRIDE_W", std::to_string(c.strideW)},
        {"PAD_D", std::to_string(c.padD)},
        {"PAD_H", std::to_string(c.padH)},
        {"PAD_W", std::to_string(c.padW)},
        {"DIL_D", std::to_string(c.dilD)},
        {"DIL_H", std::to_string(c.dilH)},
        {"DIL_W", std::to_string(c.dilW)},
        {"OUT_D", std::to_string(c.outD)},
        {"OUT_H", std::to_string(c.outH)},
        {"OUT_W", std::to_string(c.outW)},
        {"X", s.x},
        {"WEIGHT", s.weight},
        {"TRANSPOSED", c.transposed ? "true" : "false"},
        {"PHASES", std::to_string(c.phases())},
        {"ROWS_M", std::to_string(c.rowsM())},
        {"TAPS_K", std::to_string(c.tapsK())},
        {"TAP_BYTES", std::to_string(c.tapBytes())},
    };
    Leaf bias;
    if (!s.bias.empty()) { // per output channel: [C, 1, ...] against [N, C, spatial...]
        Shape view(std::size_t(s.dims) + 1, 1);
        view[0] = c.outC;
        bias = Leaf{s.bias, {c.outC}, view};
    }
    // N C spatial output, row = b * pixels + p and col = the channel: p innermost, then col, then b.
    const std::string p = std::to_string(c.pixels());
    const std::vector<IndexSegment> index{{1, c.pixels(), "(row % " + p + ")"},
                                          {c.pixels(), c.outC, "col"},
                                          {c.pixels() * c.outC, c.batch, "(row / " + p + ")"}};
    for (auto &[k, val] : epilogueValues(id, t.pattern.program, bias, 1, 1, index))
        v[k] = val;
    return v;
}

bool onTensorCores(const Target &t) { return plainConv(t).empty() || pooledConv(t).empty(); }

// The pooling pass's placeholders (parts/conv_pool.cuh): the convolution's result goes to `act`.
TemplateValues poolPassValues(TemplateValues v, const Target &t)
{
    const PoolSpec &s = *t.pattern.pool;
    v["POOL_KH"] = std::to_string(s.kernel[0]);
    v["POOL_KW"] = std::to_string(s.kernel[1]);
    v["POOL_SH"] = std::to_string(s.stride[0]);
    v["POOL_SW"] = std::to_string(s.stride[1]);
    v["POOL_PAD_H"] = std::to_string(s.pad[0]);
    v["POOL_PAD_W"] = std::to_string(s.pad[1]);
    v["POOL_OUT_H"] = std::to_string(s.outShape[2]);
    v["POOL_OUT_W"] = std::to_string(s.outShape[3]);
    v["POOL_MAX"] = s.max ? "true" : "false";
    v["POOL_COUNT_PAD"] = s.countIncludePad ? "true" : "false";
    v["POOL_DIVISOR"] = std::to_string(s.divisor);
    v["POOL"] = "1";
    v["CONV_OUT"] = "act";
    return v;
}

TemplateValues noPoolValues(TemplateValues v, const Target &t)
{
    for (const char *k : {"POOL_KH", "POOL_KW", "POOL_PAD_H", "POOL_PAD_W", "POOL_OUT_H", "POOL_OUT_W", "POOL_DIVISOR"})
        v[k] = "0";
    v["POOL_SH"] = v["POOL_SW"] = "1";
    v["POOL_MAX"] = v["POOL_COUNT_PAD"] = "true";
    v["POOL"] = "0";
    v["CONV_OUT"] = t.pattern.output;
    return v;
}

namespace {

// ---- the wgmma template (Hopper) ----
TileShape wgTile(int wgs, int bn, int stages, int producers, int split)
{
    return {{"WGS", wgs}, {"BN", bn}, {"STAGES", stages}, {"PRODUCERS", producers}, {"SPLIT", split}};
}
const std::vector<std::string> kWgMeanings{"consumer warpgroups (64 pixels each)",
                                           "block tile of output channels",
                                           "pipeline stages",
                                           "producer (gathering) warpgroups",
                                           "TF32 passes per product (3: compensated split)",
                                           "K steps (32 taps) per tensor-core chunk"};
// Shapes measured on the seed conv (H200): two blocks per SM (one consumer warpgroup, two
// stages) gave the best times; the others stay for other shapes and as local-search neighbours.
const std::vector<TileShape> kWgTiles = [] {
    std::vector<TileShape> v;
    for (int split : {3, 1})
        for (const auto &[wgs, bn, stages, producers] : std::vector<std::array<int, 4>>{{1, 96, 2, 2},
                                                                                        {1, 96, 2, 1},
                                                                                        {2, 96, 3, 2},
                                                                                        {2, 96, 3, 1},
                                                                                        {1, 96, 4, 1},
                                                                                        {1, 128, 2, 2},
                                                                                        {2, 128, 3, 2},
                                                                                        {1, 64, 3, 2},
                                                                                        {1, 64, 2, 2}}) {
            // A single TF32 pass needs more registers than two 384-thread blocks per SM leave.
            if (split == 1 && wgs == 1 && producers == 2)
                continue;
            v.push_back(wgTile(wgs, bn, stages, producers, split));
        }
    return v;
}();
std::vector<ParamDim> wgSpace()
{
    std::vector<ParamDim> dims = tileSpace(kWgTiles, kWgMeanings);
    dims.push_back({"PROMOTE", {16, 4}, kWgMeanings.back()});
    return dims;
}

// bf16: 3xbf16 operands, 64 taps to a 128-byte K step instead of 32.
int wgStepTaps(bool bf16) { return bf16 ? 64 : 32; }

int wgSmem(const Conv &c, const Point &p, bool bf16 = false)
{
    const int step = wgStepTaps(bf16);
    return int(p.at("STAGES") * (p.at("SPLIT") / 2 + 1) * (64 * p.at("WGS") + p.at("BN")) * 128 +
               cdiv(c.taps(), step) * step * 8 + 2048);
}

std::string wgFits(const Target &t, const Point &p, bool bf16 = false)
{
    if (t.major < 9)
        return "wgmma and bulk copies need a Hopper GPU (sm_90)";
    if (auto why = tileListed(kWgTiles, p); !why.empty())
        return why;
    if (p.at("SPLIT") == 1) {
        if (auto why = needsLoose(t, "single-pass TF32 (about 1e-3 relative error)"); !why.empty())
            return why;
        // Its rounding error is far above what shorter tensor-core chunks save, and the second
        // accumulator would cost the registers it needs.
        if (p.at("PROMOTE") != 16)
            return "a single TF32 pass gains nothing from short accumulation chunks";
    }
    if (bf16 && p.at("SPLIT") != 3)
        return "3xbf16 splits every value in two (SPLIT = 3)";
    if (bf16)
        if (auto why = bf16x3Fits(t, "a convolution"); !why.empty())
            return why;
    // A producer thread holds two steps of its taps: ptxas spilled 32 of a 64-tap bf16 step in
    // blocks of 512 threads (128 registers each); 256 threads leave room for them.
    const int producerTaps = 64 / std::max(1, 128 * p.at("PRODUCERS") / (64 * p.at("WGS")));
    if (bf16 && producerTaps > 16 && 128 * (p.at("WGS") + p.at("PRODUCERS")) > 256)
        return std::to_string(producerTaps) + " taps a producer thread spill in blocks of more than 256 threads";
    // A K longer than one chunk keeps a separate fp32 sum next to the accumulator.
    const Conv c = conv(t);
    const int threads = 128 * (p.at("WGS") + p.at("PRODUCERS"));
    if (cdiv(c.taps(), wgStepTaps(bf16)) > p.at("PROMOTE") && threads > 384)
        return "a separate fp32 sum (more than PROMOTE K steps) leaves too few registers for " +
            std::to_string(threads) + " threads";
    const int smem = wgSmem(c, p, bf16);
    if (smem > t.smemPerBlock)
        return std::to_string(smem) + " bytes of shared memory exceed the " + std::to_string(t.smemPerBlock) +
            " a block may have";
    return {};
}

// `fraction`: of the rate at the precision, as the template reached it on the seed conv (H200).
Estimate wgEstimate(const Target &t, const Point &p, double fraction, const std::string &how, bool bf16 = false)
{
    const Conv c = conv(t);
    const int bm = 64 * p.at("WGS"), bn = p.at("BN");
    const double tiles = double(cdiv(c.gemmM(), bm)) * double(cdiv(c.outC, bn));
    const double used =
        double(std::min<std::int64_t>(c.gemmM(), bm)) * double(std::min<std::int64_t>(c.outC, bn)) / (double(bm) * bn);
    const int threads = 128 * (p.at("WGS") + p.at("PRODUCERS"));
    const int perSm = std::max(1, std::min(2048 / threads, t.smemPerSm / (wgSmem(c, p, bf16) + 1024)));
    // bf16 products run at twice the TF32 rate.
    const double peak = bf16 ? 2 * kTf32Tflops / 3 : p.at("SPLIT") == 3 ? kTf32Tflops / 3 : kTf32Tflops;
    // One block per SM leaves the gather's latency exposed: 0.85x on the seed conv.
    return computeEstimate(t, c.flops(), peak, fraction * used * (perSm > 1 ? 1.0 : 0.85), tiles, threads, perSm,
                           how + c.gemmText());
}

TemplateValues wgValues(const Target &t, const Point &p, bool pool, const std::string &id = "conv_wgmma",
                        bool bf16 = false)
{
    TemplateValues v = pool ? poolPassValues(convValues(id, t), t) : noPoolValues(convValues(id, t), t);
    v["PRECISION"] = bf16 ? "bf16x3" : p.at("SPLIT") == 3 ? "tf32x3" : "tf32";
    v["BF16"] = bf16 ? "1" : "0";
    return v;
}

// ---- the wgmma template with the im2col operand in registers (Hopper) ----
TileShape regsTile(int wgs, int bn, int stages, int blocks, int split)
{
    return {{"WGS", wgs}, {"BN", bn}, {"STAGES", stages}, {"BLOCKS", blocks}, {"SPLIT", split}};
}
const std::vector<std::string> kRegsMeanings{"consumer warpgroups (64 pixels each)",
                                             "block tile of output channels",
                                             "weight pipeline stages",
                                             "blocks per SM the registers are capped for",
                                             "TF32 passes per product (3: compensated split)",
                                             "K steps (32 taps) per tensor-core chunk",
                                             "K steps of the gather in flight"};
// On the seed conv (H200) three one-warpgroup blocks per SM with two stages were fastest; the
// others stay for other shapes and as local-search neighbours.
const std::vector<TileShape> kRegsTiles = [] {
    std::vector<TileShape> v;
    for (int split : {3, 1})
        for (const auto &[wgs, bn, stages, blocks] : std::vector<std::array<int, 4>>{{1, 96, 2, 3},
                                                                                     {1, 96, 3, 2},
                                                                                     {2, 96, 4, 1},
                                                                                     {1, 96, 2, 2},
                                                                                     {2, 96, 2, 1},
                                                                                     {1, 64, 2, 3},
                                                                                     {1, 64, 3, 3},
                                                                                     {1, 128, 2, 2},
                                                                                     {2, 128, 3, 1},
                                                                                     {1, 32, 2, 4},
                                                                                     {1, 32, 3, 3},
                                                                                     {2, 32, 3, 2},
                                                                                     {1, 16, 2, 4},
                                                                                     {2, 16, 3, 2}})
            v.push_back(regsTile(wgs, bn, stages, blocks, split));
    return v;
}();
// 32-step chunks keep a deep K (up to 1024 taps) in the accumulator alone, which saves the
// separate sum's registers (a 3x3 conv over 64 channels has 18 steps).
std::vector<ParamDim> regsSpace()
{
    std::vector<ParamDim> dims = tileSpace(kRegsTiles, kRegsMeanings);
    dims.push_back({"PROMOTE", {16, 4, 32}, kRegsMeanings[5]});
    dims.push_back({"DEPTH", {1, 2}, kRegsMeanings[6]});
    return dims;
}

int regsSmem(const Conv &c, const Point &p)
{
    return int(p.at("STAGES") * (p.at("SPLIT") / 2 + 1) * p.at("BN") * 128 + cdiv(c.tapsK(), 32) * 32 * 8 + 2048);
}

std::string regsFits(const Target &t, const Point &p)
{
    if (t.major < 9)
        return "wgmma and bulk copies need a Hopper GPU (sm_90)";
    if (auto why = tileListed(kRegsTiles, p); !why.empty())
        return why;
    const bool single = p.at("SPLIT") == 1;
    if (single) {
        if (auto why = needsLoose(t, "single-pass TF32 (about 1e-3 relative error)"); !why.empty())
            return why;
        if (p.at("PROMOTE") < 16)
            return "a single TF32 pass gains nothing from short accumulation chunks";
    }
    const Conv c = conv(t);
    if (p.at("PROMOTE") > 16 && cdiv(c.tapsK(), 32) <= 16)
        return "K fits one 16-step chunk already";
    // A narrower tile gathers the same pixels once more for every further tile of channels.
    if (p.at("BN") < 64 && c.outC > p.at("BN"))
        return "tiles of " + std::to_string(p.at("BN")) + " channels are for convolutions with at most that many (" +
            std::to_string(c.outC) + " here)";
    // Registers per thread, as ptxas allocated them on the seed conv: the accumulator (BN / 2),
    // a separate fp32 sum when K is longer than one chunk, 16 gathered values and their hi and lo
    // parts, and addressing. The cap is what BLOCKS blocks of this size leave.
    const bool separateSum = cdiv(c.tapsK(), 32) > p.at("PROMOTE");
    // Measured: 128 channels of accumulator plus their separate sum spill at any block count.
    if (separateSum && p.at("BN") > 96)
        return "an accumulator and a separate fp32 sum of " + std::to_string(p.at("BN")) + " channels spill";
    // With a transposed convolution's phase to keep as well, NVRTC spilled 12 bytes at 96 channels
    // with a separate sum, at one block of two warpgroups and at two of one.
    if (separateSum && c.transposed && p.at("BN") > 64)
        return "a transposed convolution's accumulator and separate fp32 sum of " + std::to_string(p.at("BN")) +
            " channels spill";
    // Measured under NVRTC: a second step in flight with the 3xTF32 hi and lo parts spilled with two
    // warpgroups (32 to 96 channels) and with a separate sum.
    if (p.at("DEPTH") > 1 && !single && (p.at("WGS") > 1 || separateSum))
        return "a second step of gathered values in flight next to the 3xTF32 parts spills with " +
            std::string(separateSum ? "a separate fp32 sum" : "two warpgroups");
    // A second step of gathered values in flight: 16 more, of which ptxas found 8 elsewhere in
    // the single pass (126 registers at 96 channels, 113 with one step; 3xTF32 spilled at 128).
    const int need = p.at("BN") / 2 + (separateSum ? p.at("BN") / 2 + 24 : 0) + (single ? 70 : 80) +
        (p.at("DEPTH") - 1) * (single ? 8 : 16);
    const int threads = 128 * p.at("WGS") + 32;
    const int cap = std::min(255, 65536 / (p.at("BLOCKS") * threads) / 8 * 8);
    if (need > cap)
        return "about " + std::to_string(need) + " registers per thread are needed, " + std::to_string(p.at("BLOCKS")) +
            " blocks of " + std::to_string(threads) + " threads per SM leave " + std::to_string(cap);
    const int smem = regsSmem(c, p);
    if (smem > t.smemPerBlock)
        return std::to_string(smem) + " bytes of shared memory exceed the " + std::to_string(t.smemPerBlock) +
            " a block may have";
    if (p.at("BLOCKS") * (smem + 1024) > t.smemPerSm)
        return std::to_string(p.at("BLOCKS")) + " blocks of " + std::to_string(smem) +
            " bytes of shared memory do not fit on one SM";
    return {};
}

// `fraction`: of the rate at the precision, as the template reached it on the seed conv (H200).
Estimate regsEstimate(const Target &t, const Point &p, double fraction, const std::string &how)
{
    const Conv c = conv(t);
    const int bm = 64 * p.at("WGS"), bn = p.at("BN");
    const double tiles = double(cdiv(c.rowsM(), bm)) * double(c.phases()) * double(cdiv(c.outC, bn));
    const double used =
        double(std::min<std::int64_t>(c.rowsM(), bm)) * double(std::min<std::int64_t>(c.outC, bn)) / (double(bm) * bn);
    const int threads = 128 * p.at("WGS") + 32;
    const int perSm = p.at("BLOCKS");
    const double peak = p.at("SPLIT") == 3 ? kTf32Tflops / 3 : kTf32Tflops;
    // Fewer consumer warpgroups per SM leave the gather's latency exposed: 0.86x with two on the seed conv.
    // A second K step in flight (seed conv, H100, same tiles): the single pass 1.065x as fast at
    // three blocks per SM; the 3xTF32 split 0.86x at two blocks (its longer products hid the
    // latency already, and the registers cost it), 1.02x at three blocks of 64 channels, counted
    // as no gain so that one step stays the first choice.
    const bool single = p.at("SPLIT") == 1;
    const double depth = p.at("DEPTH") == 1 ? 1.0 : single ? 1.065 : perSm >= 3 ? 1.0 : 0.86;
    const double latency = std::min(1.0, 0.72 + 0.14 * p.at("WGS") * perSm / 1.5) * depth;
    return computeEstimate(t, c.flops(), peak, fraction * used * latency, tiles, threads, perSm, how + c.gemmText());
}

} // namespace

void addConv(std::vector<IdeaDef> &out)
{
    const std::vector<PatternKind> kinds{PatternKind::Conv};
    const std::string implicit =
        "Compute the convolution as an implicit GEMM: M = batch x output pixels (rows), N = output channels "
        "(columns), K = input channels x kernel taps. The A tile is gathered straight from the input by cp.async "
        "with zero-fill for the padding; the k -> (channel, r, s) decomposition is precomputed once per block into "
        "a shared-memory table of offsets, and each output row's window corner into another, so the gather does "
        "no division. The weight already is an [N][K] matrix. The bias and the elementwise epilogue are applied "
        "to the accumulators, stored straight into NCHW. A transposed convolution is one such GEMM per output "
        "phase (output o = q * stride + phase reads input q + e through the taps k with o + padding - k * dilation "
        "divisible by the stride), its weight [in][out][taps] gathered through a table of tap offsets.";
    const std::vector<std::string> meanings(kMeanings.begin(), kMeanings.end() - 1);

    out.push_back(IdeaDef{
        .id = "conv_implicit_gemm_tf32x3",
        .title = "Implicit GEMM convolution, k-indices precomputed in shared memory (3xTF32)",
        .text = implicit +
            " Products use the compensated 3xTF32 split on mma.sync.m16n8k8 (a = a_hi + a_lo, "
            "acc += a_lo*b_hi + a_hi*b_lo + a_hi*b_hi in fp32): fp32 accuracy on the tensor cores.",
        .patterns = kinds,
        .space = tileSpace(kTf32x3Tiles, meanings),
        .repairOrder = {"STAGES", "BK", "BM"},
        .applies = [](const Target &t) { return plainConv(t, true); },
        .check =
            [](const Target &t, const Point &p) {
                if (conv(t).tapsK() > kLongestTensorCoreSum)
                    return "a reduction over " + std::to_string(conv(t).tapsK()) +
                        " taps summed on the tensor cores alone loses too much to their truncating "
                        "accumulation (the wgmma convolutions promote their sums to fp32)";
                return fits(t, kTf32x3Tiles, p);
            },
        .estimate =
            [](const Target &t, const Point &p) {
                return convEstimate(t, p, kTf32Tflops / 3, 0.23, "makes three TF32 tensor-core passes (3xTF32)");
            },
        .values =
            [](const Target &t, const Point &) {
                TemplateValues v = convValues("conv_implicit_gemm_tf32x3", t);
                v["KERNEL"] = "conv_tf32x3"; // the name parts/conv_mma_kernel.cuh gives the kernel
                return v;
            },
    });

    out.push_back(IdeaDef{
        .id = "conv_implicit_gemm_tf32",
        .title = "Implicit GEMM convolution, k-indices precomputed in shared memory (TF32)",
        .text = implicit +
            " Operands are rounded to TF32 and multiplied once by mma.sync.m16n8k8 with fp32 "
            "accumulation: about 1e-3 relative error per product (loose tolerance), three times the "
            "rate of the compensated split.",
        .patterns = kinds,
        .needs = {"conv_implicit_gemm_tf32x3"},
        .space = tileSpace(kTf32Tiles, meanings),
        .repairOrder = {"STAGES", "BK", "BM"},
        .applies = [](const Target &t) -> std::string {
            if (auto why = needsLoose(t, "single-pass TF32 (about 1e-3 relative error)"); !why.empty())
                return why;
            return plainConv(t, true);
        },
        .check = [](const Target &t, const Point &p) { return fits(t, kTf32Tiles, p); },
        .estimate =
            [](const Target &t, const Point &p) {
                return convEstimate(t, p, kTf32Tflops, 0.12, "makes one TF32 tensor-core pass");
            },
        .values =
            [](const Target &t, const Point &) {
                TemplateValues v = convValues("conv_implicit_gemm_tf32", t);
                v["KERNEL"] = "conv_tf32"; // the name parts/conv_mma_kernel.cuh gives the kernel
                return v;
            },
    });

    out.push_back(IdeaDef{
        .id = "conv_implicit_gemm_pool",
        .title = "Fuse ReLU and max-pool into the convolution epilogue",
        .text = "The convolution's output never goes to memory: compute it as the implicit GEMM (offsets "
                "precomputed in shared memory), apply the bias and the activation to the accumulators, write the "
                "block's tile into shared memory and compute every pooling window that touches it. A window held "
                "entirely by the block is stored; one split between blocks is combined with an atomic float max "
                "into the output, which a first launch fills with -inf. SPLIT=3 makes the products with the "
                "fp32-accurate 3xTF32 split; SPLIT=1, single-pass TF32, only under the loose policy.",
        .patterns = kinds,
        .space = tileSpace(kPoolTiles, kMeanings),
        .repairOrder = {"STAGES", "BK", "MIN_BLOCKS"},
        .applies = maxPooledConv,
        .check = [](const Target &t, const Point &p) -> std::string {
            if (p.at("SPLIT") == 1)
                if (auto why = needsLoose(t, "single-pass TF32 (about 1e-3 relative error)"); !why.empty())
                    return why;
            return fits(t, kPoolTiles, p);
        },
        .estimate =
            [](const Target &t, const Point &p) {
                return p.at("SPLIT") == 3
                    ? convEstimate(t, p, kTf32Tflops / 3, 0.18,
                                   "makes three TF32 passes (3xTF32), pooling in shared memory")
                    : convEstimate(t, p, kTf32Tflops, 0.083, "makes one TF32 pass, pooling in shared memory");
            },
        .values =
            [](const Target &t, const Point &p) {
                TemplateValues v = poolPassValues(convValues("conv_implicit_gemm_pool", t), t);
                v["PRECISION"] = p.at("SPLIT") == 3 ? "tf32x3" : "tf32";
                return v;
            },
    });

    const std::string wgmma =
        "Move the implicit GEMM to Hopper's asynchronous warpgroup MMA. A first pass splits the weight into TF32 "
        "high and low parts laid out as the tensor cores read them (128-byte swizzled K-major rows). In the "
        "convolution kernel PRODUCERS producer warpgroups gather each 32-tap step of the im2col tile straight "
        "from the input (one output pixel per thread, its loads one step ahead), splits each value into hi + lo as it "
        "stores it swizzled, and streams the matching weight tiles with cp.async.bulk; WGS consumer warpgroups of "
        "64 pixels issue wgmma.m64nBNk8 from shared memory, STAGES stages in a ring of mbarriers. SPLIT=3 makes "
        "lo*hi + hi*lo + hi*hi (fp32-accurate), SPLIT=1 a single TF32 pass (loose policy only); tensor-core sums "
        "are promoted to fp32 registers every PROMOTE steps because their accumulation truncates.";

    out.push_back(IdeaDef{
        .id = "conv_wgmma",
        .title = "Implicit GEMM convolution on wgmma, im2col gathered by a producer warpgroup",
        .text = wgmma + " The bias and the elementwise epilogue are applied to the fp32 sums, stored into NCHW.",
        .patterns = kinds,
        // Hopper's fast strict path: a short search starts it in the first round, next to the
        // mma.sync kernel; one with time to spare measures the mma.sync kernel first.
        .after = {"conv_implicit_gemm_tf32x3"},
        .space = wgSpace(),
        .repairOrder = {"STAGES", "WGS", "BN"},
        .applies = [](const Target &t) { return plainConv(t); },
        .check = [](const Target &t, const Point &p) { return wgFits(t, p); },
        .estimate =
            [](const Target &t, const Point &p) {
                return p.at("SPLIT") == 3 ? wgEstimate(t, p, 0.387, "makes three TF32 wgmma passes (3xTF32)")
                                          : wgEstimate(t, p, 0.148, "makes one TF32 wgmma pass");
            },
        .values = [](const Target &t, const Point &p) { return wgValues(t, p, false); },
    });

    out.push_back(IdeaDef{
        .id = "conv_wgmma_pool",
        .title = "wgmma convolution, then the pooling (max or average) in a second pass",
        .text = wgmma +
            " The bias and activation are applied to the sums and the activation map goes to scratch; "
            "a second kernel reads each pooling window from there. Pooling inside the convolution's blocks "
            "costs more than that pass: measured on the seed conv + ReLU + max-pool (H200), 8x8 pixel "
            "rectangles whose tiles were pooled from shared memory, split windows merged with atomics, took "
            "0.414 ms against 0.306 ms for this two-pass form (and 0.327 ms for the same rectangles with the "
            "pass), because the pooling epilogue runs on one warpgroup with nothing to hide its latency.",
        .patterns = kinds,
        .after = {"conv_implicit_gemm_pool"},
        .space = wgSpace(),
        .repairOrder = {"STAGES", "WGS", "BN"},
        .applies = pooledConv,
        .check = [](const Target &t, const Point &p) { return wgFits(t, p); },
        .estimate =
            [](const Target &t, const Point &p) {
                return p.at("SPLIT") == 3 ? wgEstimate(t, p, 0.34, "makes three TF32 wgmma passes (3xTF32), then pools")
                                          : wgEstimate(t, p, 0.127, "makes one TF32 wgmma pass, then pools");
            },
        .values = [](const Target &t, const Point &p) { return wgValues(t, p, true); },
        .templateName = "conv_wgmma",
    });

    out.push_back(IdeaDef{
        .id = "conv_wgmma_bf16x3",
        .title = "wgmma convolution on a 3xbf16 split, at the 16-bit tensor-core rate",
        .text = "The wgmma implicit GEMM with every value split into two bf16 parts instead of two TF32 ones: "
                "hi = rn(x), lo = rn(x - hi) keep about 16 significant bits and fp32's exponent range, and "
                "lo*hi + hi*lo + hi*hi accumulate in fp32 with wgmma.m64nBNk16, twice the TF32 rate. A 128-byte "
                "row holds 64 taps, so each K step moves half the bytes per tap through shared memory, which "
                "bounded the TF32 form. The error left, about 1e-5 of the output's scale, stays inside the "
                "strict tolerance. The bias and epilogue apply to the fp32 sums; a pooling problem pools in a "
                "second pass.",
        .patterns = kinds,
        // A search with time to spare measures the TF32 forms first, so the trajectory shows the step.
        .after = {"conv_wgmma", "conv_wgmma_pool"},
        .space = wgSpace(),
        .repairOrder = {"STAGES", "WGS", "BN"},
        .applies = [](const Target &t) { return pooledConv(t).empty() ? std::string() : plainConv(t); },
        .check = [](const Target &t, const Point &p) { return wgFits(t, p, true); },
        .estimate =
            [](const Target &t, const Point &p) {
                // Measured on the seed conv (H100): 0.2426 ms against 0.3326 for the 3xTF32 form,
                // with pooling 0.3015 against 0.3917, not the twice its rate promises.
                return wgEstimate(t, p, pooledConv(t).empty() ? 0.221 : 0.265, "makes three bf16 wgmma passes (3xbf16)",
                                  true);
            },
        .values = [](const Target &t,
                     const Point &p) { return wgValues(t, p, pooledConv(t).empty(), "conv_wgmma", true); },
        .templateName = "conv_wgmma",
    });

    const std::string regs =
        "Take the im2col operand out of shared memory: wgmma can read A from registers. Each consumer thread "
        "loads exactly the values its A fragment holds (pixels lane/4 and lane/4 + 8 of its warp's 16 rows, taps "
        "lane%4 and lane%4 + 4 of each 8-tap slice) straight from the input, the loads of the next DEPTH "
        "steps in flight during this step's products; four lanes read four neighbouring taps of one pixel and "
        "eight pixels sit side by side, so a warp's load is a short run of an input row instead of 32 scattered "
        "words. It splits "
        "them into TF32 hi + lo in registers and issues wgmma.m64nBNk8 with A from registers; only the weight "
        "tiles pass through shared memory, streamed by one producer warp with cp.async.bulk into a STAGES-deep "
        "mbarrier ring. This halves the L1/shared-memory traffic, which bounded the shared-memory version, and "
        "leaves room for BLOCKS blocks per SM. Sums are promoted to fp32 registers every PROMOTE steps.";

    out.push_back(IdeaDef{
        .id = "conv_wgmma_regs",
        .title = "wgmma convolution with the gathered operand in registers",
        .text = regs +
            " The bias and the elementwise epilogue are applied to the fp32 sums, stored into NCHW. A transposed "
            "convolution is one such GEMM per output phase, each phase with weight tiles of its own taps; 16- and "
            "32-channel tiles serve convolutions with that few output channels.",
        .patterns = kinds,
        .needs = {"conv_wgmma"},
        .space = regsSpace(),
        .repairOrder = {"BLOCKS", "STAGES", "WGS"},
        .applies = [](const Target &t) { return plainConv(t, true); },
        .check = regsFits,
        .estimate =
            [](const Target &t, const Point &p) {
                return p.at("SPLIT") == 3
                    ? regsEstimate(t, p, 0.49, "makes three TF32 wgmma passes (3xTF32), A in registers")
                    : regsEstimate(t, p, 0.226, "makes one TF32 wgmma pass, A in registers");
            },
        .values = [](const Target &t, const Point &p) { return wgValues(t, p, false, "conv_wgmma_regs"); },
    });

    out.push_back(IdeaDef{
        .id = "conv_wgmma_regs_pool",
        .title = "wgmma convolution with the gathered operand in registers, then the pooling (max or average)",
        .text = regs +
            " The bias and activation are applied to the sums and the activation map goes to scratch; "
            "a second kernel reads each pooling window from there.",
        .patterns = kinds,
        .needs = {"conv_wgmma_pool"},
        .space = regsSpace(),
        .repairOrder = {"BLOCKS", "STAGES", "WGS"},
        .applies = pooledConv,
        .check = regsFits,
        .estimate =
            [](const Target &t, const Point &p) {
                return p.at("SPLIT") == 3
                    ? regsEstimate(t, p, 0.418, "makes three TF32 wgmma passes (3xTF32), A in registers, then pools")
                    : regsEstimate(t, p, 0.182, "makes one TF32 wgmma pass, A in registers, then pools");
            },
        .values = [](const Target &t, const Point &p) { return wgValues(t, p, true, "conv_wgmma_regs"); },
        .templateName = "conv_wgmma_regs",
    });
}

} // namespace kf::builtin::ideas
