// Convolutions as the graph writes them: conv1d/2d/3d, their transposes, and the generic
// aten::convolution / aten::_convolution a trace records. Each spells its arguments in its own
// order; here they become one ConvSpec.
#include "gen/builtin/pattern_graph.h"

#include <algorithm>

namespace kf::builtin::detail {

namespace {

// Where each argument sits, by op; -1 where the op has none (a transpose's output padding).
struct ConvArgs {
    int dims = 0; // 0: from the weight's rank
    bool transposed = false;
    int stride = 3, pad = 4, dilation = 5, outputPad = -1, groups = 6, transposedFlag = -1;
};

std::optional<ConvArgs> argsOf(const std::string &n)
{
    if (n == "aten::conv1d" || n == "aten::conv2d" || n == "aten::conv3d")
        return ConvArgs{.dims = n[10] - '0'};
    if (n == "aten::conv_transpose1d" || n == "aten::conv_transpose2d" || n == "aten::conv_transpose3d")
        return ConvArgs{.dims = n[20] - '0', .transposed = true, .dilation = 7, .outputPad = 5, .groups = 6};
    if (n == "aten::convolution" || n == "aten::_convolution")
        return ConvArgs{.outputPad = 7, .groups = 8, .transposedFlag = 6};
    return std::nullopt;
}

// A per-dim list argument: one value for every dim, or one per dim.
bool fill(const Op &op, int k, int dims, std::int64_t out[3])
{
    if (k < 0 || std::size_t(k) >= op.in.size() || op.in[std::size_t(k)].constant.is_null())
        return true;
    auto l = intList(op.in[std::size_t(k)].constant);
    if (!l || l->empty() || (l->size() != 1 && int(l->size()) != dims))
        return false;
    for (int d = 0; d < dims; ++d)
        out[d] = (*l)[l->size() == 1 ? 0 : std::size_t(d)];
    return true;
}

} // namespace

bool isConvOp(const std::string &op) { return argsOf(op).has_value(); }

Result<ConvSpec> convGeometry(const Op &op, const Shape &x, const Shape &w)
{
    auto args = argsOf(op.name);
    if (!args)
        return unsupportedOp(op.name, "as a convolution");
    ConvSpec c;
    c.op = op.name;
    c.transposed = args->transposed;
    if (args->transposedFlag >= 0 && std::size_t(args->transposedFlag) < op.in.size()) {
        const nlohmann::json &f = op.in[std::size_t(args->transposedFlag)].constant;
        c.transposed = f.is_boolean() ? f.get<bool>() : f.is_number_integer() && f.get<int>() != 0;
    }
    c.dims = args->dims ? args->dims : int(w.size()) - 2;
    if (c.dims < 1 || c.dims > 3 || int(w.size()) != c.dims + 2)
        return unsupportedOp(op.name, "with a weight of rank " + std::to_string(w.size()));
    if (int(x.size()) != c.dims + 2)
        return unsupportedOp(op.name, "of an unbatched input (rank " + std::to_string(x.size()) + ")");
    if (std::size_t(args->groups) < op.in.size() && op.in[std::size_t(args->groups)].constant.is_number_integer())
        c.groups = op.in[std::size_t(args->groups)].constant.get<std::int64_t>();
    if (c.groups < 1)
        return unsupportedOp(op.name, "with groups " + std::to_string(c.groups));

    const nlohmann::json padding =
        std::size_t(args->pad) < op.in.size() ? op.in[std::size_t(args->pad)].constant : nlohmann::json();
    const bool same = padding.is_string() && padding.get<std::string>() == "same";
    if (padding.is_string() && !same && padding.get<std::string>() != "valid")
        return unsupportedOp(op.name, "with padding '" + padding.get<std::string>() + "'");
    if (!fill(op, args->stride, c.dims, c.stride) || !fill(op, args->dilation, c.dims, c.dilation) ||
        !fill(op, args->outputPad, c.dims, c.outputPad) || (!padding.is_string() && !fill(op, args->pad, c.dims, c.pad)))
        return unsupportedOp(op.name, "with a stride, padding or dilation list of the wrong length");
    for (int d = 0; d < c.dims; ++d) {
        const std::int64_t k = w[std::size_t(d) + 2];
        if (c.stride[d] < 1 || c.dilation[d] < 1 || c.pad[d] < 0 || c.outputPad[d] < 0)
            return unsupportedOp(op.name, "with a stride or dilation below 1 or a negative padding");
        // PyTorch's "same" pads the total d*(k-1) with the odd one after the input: the output
        // starts d*(k-1)/2 before it.
        if (same)
            c.pad[d] = c.dilation[d] * (k - 1) / 2;
    }

    const std::int64_t in = x[1], channels = c.transposed ? w[0] : w[1] * c.groups;
    if (in != channels || in % c.groups != 0)
        return unsupportedOp(op.name, "whose weight has " + std::to_string(channels) + " input channels for an input of " +
                                          std::to_string(in));
    Shape out{x[0], c.transposed ? w[1] * c.groups : w[0]};
    if (!c.transposed && out[1] % c.groups != 0)
        return unsupportedOp(op.name, "with output channels not a multiple of the groups");
    for (int d = 0; d < c.dims; ++d) {
        const std::int64_t i = x[std::size_t(d) + 2], k = w[std::size_t(d) + 2];
        std::int64_t o = c.transposed
            ? (i - 1) * c.stride[d] - 2 * c.pad[d] + c.dilation[d] * (k - 1) + c.outputPad[d] + 1
            : windowOut(i, k, c.stride[d], c.pad[d], c.dilation[d], false);
        if (same)
            o = i;
        if (o < 1)
            return unsupportedOp(op.name, "with an empty output");
        out.push_back(o);
    }
    c.outShape = out;
    return c;
}

} // namespace kf::builtin::detail
