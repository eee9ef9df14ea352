// The wgmma convolution over a prepared image (resources/templates/conv_wgmma_image.cu): x is written
// once as 16-bit parts in pixel-major order with the padding as zeros and the stride folded into
// the channels, so every output pixel's taps in one image row are one contiguous run and the im2col
// tile of a K step is copied 16 bytes at a time. The gathering templates load taps one by one and
// spend most of their time there (the 3xbf16 one reached 36 % of its rate on the seed conv).
#include "gen/builtin/ideas_conv.h"

#include <algorithm>
#include <climits>

namespace kf::builtin::ideas {

namespace {

constexpr double kBf16Tflops = 989; // dense H100/H200 16-bit rate
// Of that rate, what the product over the image reached (imageEstimate says where from).
constexpr double kImageBf16x3Fraction = 0.27, kImageFp16Fraction = 0.15;

// The image's shape: the stride folded into the channels (space to depth), stride-1 taps over it.
struct Image {
    std::int64_t tapsH = 1, tapsW = 1, h = 1, w = 1, c = 8;
    std::int64_t k() const { return tapsH * tapsW * c; } // GEMM depth
    std::int64_t elements(std::int64_t batch) const { return batch * h * w * c; }
};

Image imageOf(const Conv &c)
{
    Image i;
    i.tapsH = cdiv(c.kh, c.strideH), i.tapsW = cdiv(c.kw, c.strideW);
    i.h = c.outH + i.tapsH - 1, i.w = c.outW + i.tapsW - 1;
    i.c = cdiv(c.inC * c.strideH * c.strideW, 8) * 8; // whole 16-byte chunks of 16-bit values
    return i;
}

std::string imageConv(const Target &t)
{
    const std::string plain = plainConv(t), pooled = pooledConv(t);
    if (!plain.empty() && !pooled.empty())
        return t.pattern.pool ? pooled : plain;
    const Conv c = conv(t);
    if (c.deep())
        return "a 3-D convolution (the gathering templates take it)";
    if (c.dilH != 1 || c.dilW != 1)
        return "a dilated convolution's taps are not contiguous runs of the image";
    if (imageOf(c).elements(c.batch) >= INT_MAX)
        return "the image is too large for 32-bit offsets";
    return {};
}

TileShape imageTile(int wgs, int bn, int stages) { return {{"WGS", wgs}, {"BN", bn}, {"STAGES", stages}}; }
const std::vector<std::string> kImageMeanings{"consumer warpgroups (64 pixels each)", "block tile of output channels",
                                              "pipeline stages (all but two of them in flight)"};
// Two blocks of one consumer warpgroup per SM where two rings fit, else one block with two; the
// single-part fp16 stages are half the size, so deeper rings fit.
const std::vector<TileShape> kBf16x3Tiles{imageTile(1, 96, 2),  imageTile(2, 96, 3),  imageTile(1, 96, 3),
                                          imageTile(1, 128, 2), imageTile(2, 128, 3), imageTile(1, 64, 3)};
const std::vector<TileShape> kFp16Tiles{imageTile(2, 96, 4),  imageTile(1, 96, 4), imageTile(2, 128, 4),
                                        imageTile(1, 128, 3), imageTile(1, 64, 4), imageTile(2, 96, 6)};

std::vector<ParamDim> imageSpace(const std::vector<TileShape> &tiles)
{
    std::vector<ParamDim> dims = tileSpace(tiles, kImageMeanings);
    // 32 steps (2048 taps) leave a 3x3 convolution of 128 channels (18 steps) a single chunk.
    dims.push_back({"PROMOTE", {16, 32, 4}, "K steps (64 taps) per tensor-core chunk"});
    return dims;
}

int parts(bool split) { return split ? 2 : 1; }

int imageSmem(const Point &p, bool split)
{
    return int(p.at("STAGES") * parts(split) * (64 * p.at("WGS") + p.at("BN")) * 128 + 2048);
}

// K steps of 64 taps.
std::int64_t imageSteps(const Target &t) { return cdiv(imageOf(conv(t)).k(), 64); }

// The template's rule for two blocks per SM (kMinBlocks): their rings fit, and the registers of
// 256 threads hold the accumulator, with its fp32 sum (a K longer than one chunk) only at 64 channels.
int blocksPerSm(const Target &t, const Point &p, bool split)
{
    const bool sum = imageSteps(t) > p.at("PROMOTE");
    return 2 * imageSmem(p, split) <= t.smemPerSm - 2048 && p.at("WGS") == 1 && (!sum || p.at("BN") <= 64) ? 2 : 1;
}

std::string imageFits(const Target &t, const std::vector<TileShape> &tiles, const Point &p, bool split)
{
    if (t.major < 9)
        return "wgmma and bulk copies need a Hopper GPU (sm_90)";
    if (auto why = tileListed(tiles, p); !why.empty())
        return why;
    if (!split && p.at("PROMOTE") == 4)
        return "a single fp16 pass gains nothing from short accumulation chunks";
    const int smem = imageSmem(p, split);
    if (smem > t.smemPerBlock)
        return std::to_string(smem) + " bytes of shared memory exceed the " + std::to_string(t.smemPerBlock) +
            " a block may have";
    // 32 steps of 64 taps summed on the tensor cores stay inside the longest sum they may make alone.
    if (std::int64_t(p.at("PROMOTE")) * 64 > kLongestTensorCoreSum)
        return "more than " + std::to_string(kLongestTensorCoreSum) + " taps summed on the tensor cores alone";
    // A longer chunk than K changes nothing: the kernel would be the shorter one's.
    const std::int64_t steps = imageSteps(t);
    if (p.at("PROMOTE") > 16 && steps <= 16)
        return "K (" + std::to_string(steps) + " steps) fits one chunk of 16 steps already";
    if (p.at("PROMOTE") < 16 && steps <= p.at("PROMOTE"))
        return "K (" + std::to_string(steps) + " steps) fits one chunk of PROMOTE steps already";
    return {};
}

// `fraction` of the rate at the precision that the GEMM part is taken to reach: measured on the
// seed conv2d (H100, 2026-12-07), the product took 0.28 ms of 3xbf16 (0.27 of that rate) and
// 0.17 ms of fp16 (0.15), its producer's cp.async copies not keeping up with the tensor cores. The
// image pass reads x and writes the image at the copy bandwidth, before it.
Estimate imageEstimate(const Target &t, const Point &p, bool split, double fraction, const std::string &how)
{
    const Conv c = conv(t);
    const Image img = imageOf(c);
    const int bm = 64 * p.at("WGS"), bn = p.at("BN");
    const double tiles = double(cdiv(c.gemmM(), bm)) * double(cdiv(c.outC, bn));
    const double used =
        double(std::min<std::int64_t>(c.gemmM(), bm)) * double(std::min<std::int64_t>(c.outC, bn)) / (double(bm) * bn);
    const double peak = split ? kBf16Tflops / 3 : kBf16Tflops;
    const double flops = 2.0 * double(c.gemmM()) * double(c.outC) * double(img.k());
    const double gemmSeconds = flops / (peak * 1e12 * fraction * used * double(t.sms) / 132.0);
    const double passBytes = 4.0 * double(c.batch * c.inC * c.inH * c.inW) + 2.0 * parts(split) * img.elements(c.batch);
    const double passSeconds = passBytes / 3.0e12;
    const double effective = fraction * used * gemmSeconds / (gemmSeconds + passSeconds);
    const int threads = 128 * (p.at("WGS") + 1);
    return computeEstimate(t, flops, peak, effective, tiles, threads, blocksPerSm(t, p, split),
                           how + " over " + std::to_string(c.gemmM()) + " pixels x " + std::to_string(c.outC) +
                               " channels x " + std::to_string(img.k()) + " image taps");
}

TemplateValues imageValues(const Target &t, bool split)
{
    const Conv c = conv(t);
    const Image img = imageOf(c);
    const std::string id = "conv_wgmma_image";
    TemplateValues v = t.pattern.pool ? poolPassValues(convValues(id, t), t) : noPoolValues(convValues(id, t), t);
    v["PRECISION"] = split ? "bf16x3" : "fp16";
    v["BF16"] = split ? "1" : "0";
    v["SPLIT"] = split ? "3" : "1";
    v["TAPS_H"] = std::to_string(img.tapsH);
    v["TAPS_W"] = std::to_string(img.tapsW);
    v["IMG_H"] = std::to_string(img.h);
    v["IMG_W"] = std::to_string(img.w);
    v["IMG_C"] = std::to_string(img.c);
    v["IMAGE_K"] = std::to_string(img.k());
    return v;
}

const std::string kImageText =
    "Stop gathering the im2col operand tap by tap. A first pass writes x once as an image of 16-bit parts, "
    "pixel-major ([batch][row][column][channel]), the padding written as zeros and the stride folded into the "
    "channels (space to depth: channel (c, u, v) of image pixel (i, j) is x[c][i * stride + u - pad][j * stride + "
    "v - pad]). The strided convolution becomes a stride-1 one over the image, its taps past the kernel weighted "
    "zero, and an output pixel's taps in one image row are one contiguous run. A producer warpgroup copies each "
    "64-tap K step of every pixel of the tile as eight 16-byte cp.async copies into the 128-byte swizzled stage "
    "(eight lanes per pixel, so a warp reads whole lines, kept in L1 for the neighbouring pixels whose runs "
    "overlap), all but one stage in flight, while the weight tiles arrive by bulk copy; WGS consumer "
    "warpgroups issue wgmma.m64nBNk16 from shared memory. Sums are promoted to fp32 registers every PROMOTE "
    "steps; the bias and epilogue apply to them, and a pooling problem pools in a second pass.";

} // namespace

void addConvImage(std::vector<IdeaDef> &out)
{
    const std::vector<PatternKind> kinds{PatternKind::Conv};
    out.push_back(IdeaDef{
        .id = "conv_wgmma_image_bf16x3",
        .title = "wgmma convolution over a prepared image: im2col runs copied, not gathered (3xbf16)",
        .text = kImageText +
            " Every value is split into bf16 hi + lo in the image and the weight tiles, and lo*hi + hi*lo + hi*hi "
            "keep the strict tolerance (about 2e-5 of the output's scale on the gathering 3xbf16 kernel).",
        .patterns = kinds,
        // A search with time to spare measures the gathering form first, so the trajectory shows the step.
        .after = {"conv_wgmma_bf16x3"},
        .space = imageSpace(kBf16x3Tiles),
        .repairOrder = {"STAGES", "WGS", "BN"},
        .applies = [](const Target &t) -> std::string {
            if (auto why = imageConv(t); !why.empty())
                return why;
            return bf16x3Fits(t, "a convolution");
        },
        .check = [](const Target &t, const Point &p) { return imageFits(t, kBf16x3Tiles, p, true); },
        .estimate =
            [](const Target &t, const Point &p) {
                return imageEstimate(t, p, true, kImageBf16x3Fraction,
                                     "makes three bf16 wgmma passes (3xbf16) from a prepared image");
            },
        .values = [](const Target &t, const Point &) { return imageValues(t, true); },
        .templateName = "conv_wgmma_image",
    });
    out.push_back(IdeaDef{
        .id = "conv_wgmma_image_fp16",
        .title = "wgmma convolution over a prepared fp16 image (one pass, loose)",
        .text = kImageText +
            " The image and the weight tiles hold x and the weight rounded to fp16 (11 significant bits, "
            "about 5e-4 relative error per product, loose tolerance), multiplied once with fp32 accumulation: "
            "three times the 3xbf16 rate and half its copies.",
        .patterns = kinds,
        // As for 3xbf16: a search with time to spare measures the gathering form first. Without
        // this the loose seed convolutions started on it in round 1 and their trajectories showed
        // two improving ideas instead of the ladder's steps.
        .after = {"conv_wgmma", "conv_wgmma_pool"},
        .space = imageSpace(kFp16Tiles),
        .repairOrder = {"STAGES", "WGS", "BN"},
        .applies = [](const Target &t) -> std::string {
            if (auto why = needsLoose(t, "single-pass fp16 (about 5e-4 relative error)"); !why.empty())
                return why;
            return imageConv(t);
        },
        .check = [](const Target &t, const Point &p) { return imageFits(t, kFp16Tiles, p, false); },
        .estimate =
            [](const Target &t, const Point &p) {
                return imageEstimate(t, p, false, kImageFp16Fraction,
                                     "makes one fp16 wgmma pass from a prepared image");
            },
        .values = [](const Target &t, const Point &) { return imageValues(t, false); },
        .templateName = "conv_wgmma_image",
    });
}

} // namespace kf::builtin::ideas
