// Every convolution the tensor-core templates do not take (1-D and 3-D, transposed, grouped and
// depthwise, dilated, inputs past 32-bit offsets), computed directly in fp32 with its bias,
// elementwise epilogue and, in 2-D, a pooling pass after it.
#include "gen/builtin/ideas.h"

#include <algorithm>
#include <climits>

namespace kf::builtin::ideas {

namespace {

constexpr double kFp32Tflops = 67; // an H200's FFMA rate

// The geometry with a 1-D or 2-D convolution's missing dims at 1, outermost first (D, H, W).
struct Direct {
    std::int64_t batch = 0, inC = 0, outC = 0, groups = 1;
    std::int64_t in[3]{1, 1, 1}, out[3]{1, 1, 1}, k[3]{1, 1, 1}, s[3]{1, 1, 1}, p[3]{0, 0, 0}, d[3]{1, 1, 1};
    std::int64_t outSp() const { return out[0] * out[1] * out[2]; }
    std::int64_t taps() const { return k[0] * k[1] * k[2]; }
    std::int64_t coutG() const { return outC / groups; }
    // Multiply-adds the gather loop walks (a transposed convolution skips most of its taps).
    double steps() const { return double(batch) * double(outC) * double(outSp()) * double(inC / groups) * double(taps()); }
};

std::string directOf(const Target &t, Direct &c)
{
    const Pattern &p = t.pattern;
    if (!p.conv)
        return "the pattern has no convolution";
    const ConvSpec &s = *p.conv;
    if (auto why = convOperands(t); !why.empty())
        return why;
    const TensorSpec *x = t.problem->tensor(s.x), *w = t.problem->tensor(s.weight);
    if (int(x->shape.size()) != s.dims + 2 || int(s.outShape.size()) != s.dims + 2)
        return "only batched inputs are supported";
    c.batch = x->shape[0], c.inC = x->shape[1], c.outC = s.outShape[1], c.groups = s.groups;
    const int skip = 3 - s.dims;
    for (int j = 0; j < s.dims; ++j) {
        const std::size_t i = std::size_t(j) + 2;
        c.in[skip + j] = x->shape[i], c.out[skip + j] = s.outShape[i], c.k[skip + j] = w->shape[i];
        c.s[skip + j] = s.stride[j], c.p[skip + j] = s.pad[j], c.d[skip + j] = s.dilation[j];
    }
    for (int j = 0; j < 3; ++j)
        if (c.in[j] >= INT_MAX / 4 || c.out[j] >= INT_MAX / 4 || c.d[j] * c.k[j] >= INT_MAX / 4 ||
            c.s[j] * c.in[j] >= INT_MAX / 4)
            return "a spatial dim does not fit an int";
    if (c.inC >= INT_MAX || c.outC >= INT_MAX || c.out[1] * c.out[2] >= INT_MAX)
        return "the channels or an output plane do not fit an int";
    if (p.program.shape != s.outShape)
        return "the epilogue reshapes the convolution's output";
    if (p.pool && s.dims != 2)
        return "pooling after a " + std::to_string(s.dims) + "-D convolution";
    return p.pool ? poolPassTakes(t) : std::string();
}

Direct direct(const Target &t)
{
    Direct c;
    directOf(t, c);
    return c;
}

std::int64_t slots(const Direct &c, int co) { return c.batch * c.groups * cdiv(c.coutG(), co) * c.outSp(); }

// The placeholders of conv_direct.cu, which conv_transpose_phased.cu shares.
TemplateValues directValues(const std::string &id, const Target &t, int co, int block)
{
    const Direct c = direct(t);
    const ConvSpec &s = *t.pattern.conv;
    auto str = [](std::int64_t v) { return std::to_string(v); };
    TemplateValues v{
        {"OP", s.op.substr(6)},
        {"BATCH", str(c.batch)},
        {"IN_C", str(c.inC)},
        {"OUT_C", str(c.outC)},
        {"GROUPS", str(c.groups)},
        {"TRANSPOSED", s.transposed ? "true" : "false"},
        {"X", s.x},
        {"WEIGHT", s.weight},
        {"CO", str(co)},
        {"BLOCK", str(block)},
        {"GRID", str(std::clamp<std::int64_t>(cdiv(slots(c, co), block), 1, INT_MAX))},
    };
    const char *const dims[] = {"D", "H", "W"};
    for (int j = 0; j < 3; ++j) {
        const std::string d = dims[j];
        v["IN_" + d] = str(c.in[j]), v["OUT_" + d] = str(c.out[j]), v["K" + d] = str(c.k[j]);
        v["S" + d] = str(c.s[j]), v["P" + d] = str(c.p[j]), v["D" + d] = str(c.d[j]);
    }
    Leaf bias;
    if (!s.bias.empty()) { // per output channel: [C, 1, ...] against [N, C, spatial...]
        Shape view(std::size_t(s.dims) + 1, 1);
        view[0] = c.outC;
        bias = Leaf{s.bias, {c.outC}, view};
    }
    // The output [batch][channel][position]: position innermost.
    const std::vector<IndexSegment> index{
        {1, c.outSp(), "sp"}, {c.outSp(), c.outC, "co"}, {c.outSp() * c.outC, c.batch, "n"}};
    for (auto &[k, val] : epilogueValues(id, t.pattern.program, bias, 1, 1, index))
        v[k] = val;
    return t.pattern.pool ? poolPassValues(std::move(v), t) : noPoolValues(std::move(v), t);
}

// conv_transpose_phased: the weights in shared memory, [input channel][tap][output channel] with
// the output channels padded to whole tiles of `co`.
std::int64_t phasedSmem(const Direct &c, int co) { return c.inC * c.taps() * cdiv(c.outC, co) * co * 4; }

// Its slots: every output position of every phase row, tile of channels and batch.
std::int64_t phasedSlots(const Direct &c, int co)
{
    return c.batch * cdiv(c.outC, co) * c.out[0] * c.out[1] * c.s[2] * cdiv(c.out[2], c.s[2]);
}

// Blocks of `block` threads an SM holds with `smem` bytes each.
int phasedPerSm(const Target &t, std::int64_t smem, int block)
{
    return int(std::max<std::int64_t>(
        1, std::min<std::int64_t>(2048 / block, t.smemPerSm / std::max<std::int64_t>(smem + 1024, 1))));
}

// Its grid: a few blocks per SM, each loading the weights once, and no more blocks than slots need.
std::int64_t phasedGrid(const Target &t, const Direct &c, int co, int block)
{
    const std::int64_t perSm = phasedPerSm(t, phasedSmem(c, co), block);
    return std::clamp<std::int64_t>(std::min<std::int64_t>(cdiv(phasedSlots(c, co), block), t.sms * perSm), 1, INT_MAX);
}

} // namespace

void addConvDirect(std::vector<IdeaDef> &out)
{
    out.push_back(IdeaDef{
        .id = "conv_direct",
        .title = "Direct convolution in fp32, a few output channels per thread",
        .text = "Compute the convolution directly, whatever its rank, stride, padding, dilation and groups, "
                "transposed or not: each thread takes CO neighbouring output channels of one group at one output "
                "position and walks the window of every input channel of the group, reading each input value "
                "once for all CO sums; consecutive threads take consecutive positions, so the warp's input loads "
                "are contiguous runs and its weight loads one broadcast address. A transposed convolution gathers: "
                "output o takes input i through tap k where i x stride = o + padding - k x dilation. The bias and "
                "the elementwise epilogue are applied to the fp32 sums; a 2-D convolution's pooling runs in a "
                "second pass over its result. Offsets are 64-bit, so any size works.",
        .patterns = {PatternKind::Conv},
        .space = {{"CO", {4, 1, 2, 8}, "output channels per thread"}, {"BLOCK", {256, 128}, "threads per block"}},
        .repairOrder = {"CO", "BLOCK"},
        .applies = [](const Target &t) -> std::string {
            Direct c;
            if (auto why = directOf(t, c); !why.empty())
                return why;
            // Below 16 output channels a tensor-core tile (64 channels and more) is mostly padding,
            // and the direct convolution stays a candidate.
            if (onTensorCores(t) && c.outC >= 16)
                return "the tensor-core ideas take this convolution as an implicit GEMM";
            return {};
        },
        .check = [](const Target &t, const Point &p) -> std::string {
            const int co = p.at("CO");
            const std::int64_t group = direct(t).coutG();
            if (co > group && co / 2 >= group)
                return "a group has " + std::to_string(group) + " output channels, fewer than CO / 2";
            return {};
        },
        .estimate =
            [](const Target &t, const Point &p) {
                const Direct c = direct(t);
                const int co = p.at("CO"), block = p.at("BLOCK");
                // Each step loads an input value and CO weights (L1 broadcasts) for CO multiply-adds:
                // the load pipe, not the FMA rate, sets the pace until CO is a few.
                const double fraction = co == 1 ? 0.12 : co == 2 ? 0.2 : co == 4 ? 0.3 : 0.34;
                const double blocks = double(cdiv(slots(c, co), block));
                return computeEstimate(t, 2 * c.steps(), kFp32Tflops, fraction, blocks, block, 2048 / block,
                                       "walks " + std::to_string(c.taps()) + " taps x " + std::to_string(c.inC / c.groups) +
                                           " input channels per output, " + std::to_string(co) +
                                           " output channels per thread");
            },
        .values = [](const Target &t,
                     const Point &p) { return directValues("conv_direct", t, p.at("CO"), p.at("BLOCK")); },
    });

    out.push_back(IdeaDef{
        .id = "conv_transpose_phased",
        .title = "Transposed convolution in fp32, a warp's outputs in one phase",
        .text = "Compute a transposed convolution directly in fp32 with the threads grouped by phase: the taps an "
                "output takes depend on its position modulo the stride, so consecutive threads take the outputs of "
                "one phase along a row (every stride-th output) and a warp walks only that phase's taps, with no "
                "lane idle and its input loads one contiguous run. Each thread keeps CO output channels; the "
                "weights sit in shared memory as [input channel][tap][output channel], read 16 bytes at a time at "
                "one address for the whole warp, so an input value costs one load and CO / 4 shared reads for CO "
                "multiply-adds. The grid is a few blocks per SM, each loading the weights once.",
        .patterns = {PatternKind::Conv},
        .space = {{"CO", {16, 8, 32, 4}, "output channels per thread"}, {"BLOCK", {256, 128}, "threads per block"}},
        .repairOrder = {"CO", "BLOCK"},
        .applies = [](const Target &t) -> std::string {
            Direct c;
            if (auto why = directOf(t, c); !why.empty())
                return why;
            if (!t.pattern.conv->transposed)
                return "not a transposed convolution";
            if (c.groups != 1)
                return "a grouped transposed convolution (conv_direct takes it)";
            if (phasedSmem(c, 4) > t.smemPerBlock)
                return "its weights (" + std::to_string(phasedSmem(c, 4) / 1024) + " KB) do not fit in shared memory";
            return {};
        },
        .check = [](const Target &t, const Point &p) -> std::string {
            const Direct c = direct(t);
            const int co = p.at("CO");
            if (co > 4 && co / 2 >= c.outC)
                return "the convolution has " + std::to_string(c.outC) + " output channels, fewer than CO / 2";
            if (phasedSmem(c, co) > t.smemPerBlock)
                return "the weights padded to tiles of " + std::to_string(co) + " channels do not fit in shared memory";
            return {};
        },
        .estimate =
            [](const Target &t, const Point &p) {
                const Direct c = direct(t);
                const int co = p.at("CO"), block = p.at("BLOCK");
                // Each valid tap costs a load, CO / 4 shared reads and CO multiply-adds; about one
                // tap in stride^rank is valid. A guess until measured.
                const double fraction = co == 4 ? 0.35 : co == 8 ? 0.45 : 0.55;
                const double valid = c.steps() / double(c.s[0] * c.s[1] * c.s[2]);
                return computeEstimate(
                    t, 2 * valid, kFp32Tflops, fraction, double(phasedGrid(t, c, co, block)), block,
                    phasedPerSm(t, phasedSmem(c, co), block),
                    "walks about " + std::to_string(std::max<std::int64_t>(1, c.taps() / (c.s[0] * c.s[1] * c.s[2]))) +
                        " taps of its phase x " + std::to_string(c.inC) + " input channels per output, " +
                        std::to_string(co) + " output channels per thread");
            },
        .values =
            [](const Target &t, const Point &p) {
                const Direct c = direct(t);
                const int co = p.at("CO"), block = p.at("BLOCK");
                TemplateValues v = directValues("conv_transpose_phased", t, co, block);
                v["GRID"] = std::to_string(phasedGrid(t, c, co, block));
                v["SMEM"] = std::to_string(phasedSmem(c, co));
                return v;
            },
    });
}

} // namespace kf::builtin::ideas
