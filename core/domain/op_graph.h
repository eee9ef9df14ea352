#pragma once
// A problem as the worker loaded it: the reference's op graph, its FLOPs and bytes.
#include "problem/problem.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kf {

struct OpNode {
    std::string op;                                                   // "aten::conv2d"
    std::vector<std::string> inputs, outputs;                         // value names
    std::vector<std::vector<std::int64_t>> inputShapes, outputShapes; // [] where not a tensor or unknown
    nlohmann::json constants; // scalar / list arguments, in order (null where a tensor)
    double flops = 0;
};

struct LoadedProblem {
    std::vector<OpNode> graph;
    double flops = 0;
    std::string flopsSource; // "declared" or "graph"
    double bytes = 0;
    std::vector<TensorSpec> outputs; // as the reference produced them
};

} // namespace kf
