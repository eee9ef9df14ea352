// The wgmma convolution over a slab of the input in shared memory
// (resources/templates/conv_wgmma_slab.cu): each warpgroup copies the rows of x that one tile of
// output pixels' windows cover, as whole 16-byte runs, and reads its wgmma A fragments from there
// into registers, so neither a gather from global memory (the conv_wgmma and conv_wgmma_regs
// kernels wait on its latency) nor a prepared image (conv_wgmma_image's extra pass) is needed. The
// weight stays in shared memory for the whole of a persistent block's life.
#include "gen/builtin/ideas_conv.h"

#include <algorithm>

namespace kf::builtin::ideas {

namespace {

constexpr double kHalfTflops = 989; // dense H100/H200 16-bit rate
constexpr double kSlabBf16x3Fraction = 0.32, kSlabFp16Fraction = 0.145;

// A tile of output pixels (one warpgroup's 64 GEMM rows): whole output rows where they fit.
struct SlabShape {
    std::int64_t tileH = 1, tileW = 1, bn = 16, tilesN = 1, vec = 1, slabH = 1, slabW = 1, slices = 1, tasks = 0;
};

SlabShape slabShape(const Conv &c)
{
    SlabShape s;
    s.tileW = std::min<std::int64_t>(c.outW, 64);
    s.tileH = std::max<std::int64_t>(1, std::min<std::int64_t>(c.outH, 64 / s.tileW));
    // The narrowest wgmma width that holds every channel, else the one of 64, 96 or 128 that pads least.
    s.bn = 128;
    for (std::int64_t n : {16, 32, 64, 96, 128})
        if (c.outC <= n) {
            s.bn = n;
            break;
        }
    if (c.outC > 128)
        for (std::int64_t n : {96, 64})
            if (cdiv(c.outC, n) * n < cdiv(c.outC, s.bn) * s.bn)
                s.bn = n;
    s.tilesN = cdiv(c.outC, s.bn);
    s.vec = c.inW % 4 == 0 ? 4 : 1;
    s.slabH = (s.tileH - 1) * c.strideH + (c.kh - 1) * c.dilH + 1;
    s.slabW = cdiv((s.tileW - 1) * c.strideW + (c.kw - 1) * c.dilW + 1 + s.vec - 1, s.vec) * s.vec;
    s.slices = cdiv(c.taps(), 16);
    s.tasks = c.batch * cdiv(c.outH, s.tileH) * cdiv(c.outW, s.tileW);
    return s;
}

int parts(const Point &p) { return p.at("SPLIT") == 3 ? 2 : 1; }

// The template's kSmemBytes: the weight tiles, SLABS slabs per warpgroup, the tap table (an int4 of
// offsets per thread quad of each slice), the barrier and the slack that aligns the tiles to 1024
// bytes.
std::int64_t slabSmem(const Conv &c, const Point &p)
{
    const SlabShape s = slabShape(c);
    const std::int64_t weights = parts(p) * s.tilesN * s.bn * cdiv(c.taps(), 64) * 128;
    return weights + p.at("WGS") * p.at("SLABS") * c.inC * s.slabH * s.slabW * 4 + s.slices * 64 + 16 + 1024;
}

std::string slabConv(const Target &t)
{
    const std::string plain = plainConv(t), pooled = pooledConv(t);
    if (!plain.empty() && !pooled.empty())
        return t.pattern.pool ? pooled : plain;
    const Conv c = conv(t);
    if (c.deep())
        return "a 3-D convolution (the gathering templates take it)";
    if (t.major < 9)
        return "wgmma and bulk copies need a Hopper GPU (sm_90)";
    return {};
}

std::string slabFits(const Target &t, const Point &p)
{
    const Conv c = conv(t);
    if (p.at("SPLIT") == 1) {
        if (auto why = needsLoose(t, "single-pass fp16 (about 5e-4 relative error)"); !why.empty())
            return why;
    } else if (auto why = bf16x3Fits(t, "a convolution"); !why.empty()) {
        return why;
    }
    // The whole of K is summed on the tensor cores (the template promotes nothing to fp32 registers).
    const std::int64_t longest = p.at("SPLIT") == 3 ? 1024 : kLongestTensorCoreSum;
    if (c.taps() > longest)
        return std::to_string(c.taps()) + " taps summed on the tensor cores alone (at most " + std::to_string(longest) +
            " here)";
    const std::int64_t smem = slabSmem(c, p);
    if (smem > t.smemPerBlock)
        return std::to_string(smem) + " bytes of shared memory (the weight tiles and " + std::to_string(p.at("WGS")) +
            " warpgroups' slabs) exceed the " + std::to_string(t.smemPerBlock) + " a block may have";
    return {};
}

// `fraction`: of the 16-bit rate at the precision, over the products the tiles make (padding
// included), what the kernel is taken to reach. Measured on the seed conv2d (H100, 2026-12-07,
// docs/benchmarks/2026-12-07-slab-conv.md, tools/eval-slab.sh): the best points, two warpgroups
// (3xbf16, one slab each) 0.238 ms and two warpgroups with two slabs each (fp16) 0.174 ms, 0.32
// and 0.145 of those rates; one warpgroup took 0.29-0.32 ms either way.
Estimate slabEstimate(const Target &t, const Point &p, double fraction, const std::string &how)
{
    const Conv c = conv(t);
    const SlabShape s = slabShape(c);
    const double peak = p.at("SPLIT") == 3 ? kHalfTflops / 3 : kHalfTflops;
    const double made = 2.0 * double(s.tasks) * 64 * double(s.tilesN * s.bn) * double(s.slices * 16);
    const double flops = 2.0 * double(c.gemmM()) * double(c.outC) * double(c.taps());
    const double blocks = double(std::min<std::int64_t>(t.sms, cdiv(s.tasks, p.at("WGS"))));
    return computeEstimate(t, flops, peak, fraction * flops / made, blocks, 128 * p.at("WGS"), 1,
                           how + " over " + std::to_string(c.gemmM()) + " pixels x " + std::to_string(c.outC) +
                               " channels x " + std::to_string(c.taps()) + " taps");
}

TemplateValues slabValues(const Target &t, const Point &p)
{
    const Conv c = conv(t);
    const SlabShape s = slabShape(c);
    const std::string id = "conv_wgmma_slab";
    TemplateValues v = t.pattern.pool ? poolPassValues(convValues(id, t), t) : noPoolValues(convValues(id, t), t);
    v["PRECISION"] = p.at("SPLIT") == 3 ? "bf16x3" : "fp16";
    v["SPLIT"] = std::to_string(p.at("SPLIT"));
    v["WGS"] = std::to_string(p.at("WGS"));
    v["SLABS"] = std::to_string(p.at("SLABS"));
    v["BN"] = std::to_string(s.bn);
    v["TILE_H"] = std::to_string(s.tileH);
    v["TILE_W"] = std::to_string(s.tileW);
    v["VEC"] = std::to_string(s.vec);
    v["GRID"] = std::to_string(std::min<std::int64_t>(t.sms, cdiv(s.tasks, p.at("WGS"))));
    v["SMEM"] = std::to_string(slabSmem(c, p));
    return v;
}

const std::string kSlabText =
    "Read the im2col operand from shared memory instead of gathering it from global memory. A persistent block "
    "copies every weight tile (16-bit parts, 128-byte swizzled K-major rows) into shared memory once; each of its "
    "WGS warpgroups then walks its own tiles of 64 output pixels (whole output rows of one image where they fit), "
    "copying the slab of x that the tile's windows cover (all channels, the padding zero-filled) with 16-byte "
    "cp.async, and for each 16-tap slice every thread reads the 8 values of its wgmma A fragment from the slab "
    "through a table of tap offsets, rounds them to 16 bits in registers and issues wgmma.m64nNk16 with A from "
    "registers, reading the next slice's fragment while the tensor cores multiply this one. Each input value "
    "crosses from memory about once per tile instead of once per tap (11x11 taps at stride 4 overlap about 7 "
    "times), and a warpgroup copying its slab leaves the tensor cores to the others. The bias and epilogue apply "
    "to the fp32 sums; a pooling problem pools in a second pass.";

TileShape slabTile(int wgs, int slabs, int split) { return {{"WGS", wgs}, {"SLABS", slabs}, {"SPLIT", split}}; }

} // namespace

void addConvSlab(std::vector<IdeaDef> &out)
{
    const std::vector<PatternKind> kinds{PatternKind::Conv};
    const std::vector<std::string> meanings{"warpgroups per block, each on its own tiles",
                                            "slabs per warpgroup (2: the next tile's copied ahead)",
                                            "16-bit passes per product (3: 3xbf16 split, 1: fp16)"};
    // The 3xbf16 weight tiles take most of shared memory on the seed conv (144 KB): two slabs
    // beside them, on one warpgroup or two.
    const std::vector<TileShape> strictTiles{slabTile(2, 1, 3), slabTile(1, 2, 3), slabTile(3, 1, 3),
                                             slabTile(1, 1, 3)};
    const std::vector<TileShape> looseTiles{slabTile(2, 2, 1), slabTile(3, 1, 1), slabTile(4, 1, 1), slabTile(2, 1, 1),
                                            slabTile(1, 2, 1)};
    out.push_back(IdeaDef{
        .id = "conv_wgmma_slab_bf16x3",
        .title = "wgmma convolution reading its taps from a slab of the input in shared memory (3xbf16)",
        .text = kSlabText +
            " Every value is split into bf16 hi + lo (the slab's in registers, the weight's in its tiles), and "
            "lo*hi + hi*lo + hi*hi keep the strict tolerance.",
        .patterns = kinds,
        // A search with time to spare measures the gathering form first, so the trajectory shows the step.
        .after = {"conv_wgmma_bf16x3"},
        .space = tileSpace(strictTiles, meanings),
        .repairOrder = {"WGS", "SLABS"},
        .applies = [](const Target &t) -> std::string {
            if (auto why = slabConv(t); !why.empty())
                return why;
            return bf16x3Fits(t, "a convolution");
        },
        .check =
            [strictTiles](const Target &t, const Point &p) {
                if (auto why = tileListed(strictTiles, p); !why.empty())
                    return why;
                return slabFits(t, p);
            },
        .estimate =
            [](const Target &t, const Point &p) {
                return slabEstimate(t, p, kSlabBf16x3Fraction,
                                    "makes three bf16 wgmma passes (3xbf16), taps from a slab");
            },
        .values = slabValues,
        .templateName = "conv_wgmma_slab",
    });
    out.push_back(IdeaDef{
        .id = "conv_wgmma_slab_fp16",
        .title = "wgmma convolution reading its taps from a slab of the input in shared memory (fp16, loose)",
        .text = kSlabText +
            " The taps and the weight are rounded to fp16 (about 5e-4 relative error per product, loose "
            "tolerance) and multiplied once with fp32 accumulation.",
        .patterns = kinds,
        .after = {"conv_wgmma_regs", "conv_wgmma_regs_pool"},
        .space = tileSpace(looseTiles, meanings),
        .repairOrder = {"WGS", "SLABS"},
        .applies = [](const Target &t) -> std::string {
            if (auto why = needsLoose(t, "single-pass fp16 (about 5e-4 relative error)"); !why.empty())
                return why;
            return slabConv(t);
        },
        .check =
            [looseTiles](const Target &t, const Point &p) {
                if (auto why = tileListed(looseTiles, p); !why.empty())
                    return why;
                return slabFits(t, p);
            },
        .estimate =
            [](const Target &t, const Point &p) {
                return slabEstimate(t, p, kSlabFp16Fraction, "makes one fp16 wgmma pass, taps from a slab");
            },
        .values = slabValues,
        .templateName = "conv_wgmma_slab",
    });
}

} // namespace kf::builtin::ideas
