#pragma once
// A module problem's reference (docs/formats.md, "Module problems"): the saved TorchScript module
// turned into the graph of a function forward(inputs..., params...), the form a source problem's
// reference has, so that the op graph, the fp64 reference and the built-in generator's matcher
// see the same thing whichever way the problem was written (internal to the worker).
#include "problem/problem.h"

#include <torch/script.h>

#include <memory>
#include <vector>

namespace kf::ref {

struct LoweredModule {
    std::shared_ptr<torch::jit::Graph> graph; // forward(inputs..., params...), no module left in it
    std::vector<torch::Tensor> params;        // the module's own tensors, in the problem's order
};

// Loads `p.module`, inlines forward, turns the module's non-tensor attributes into constants and
// folds what they decide (an `if self.training`, input-dim checks that only raise), and makes each
// tensor attribute the parameter that names it (ParamSpec::attribute). Errors name the file; a
// module that does not load and was saved by a newer PyTorch names both versions.
Result<LoweredModule> lowerModule(const Problem &p);

// True when version `a` ("2.5.1+cu124") has a higher major.minor than `b`.
bool newerTorch(const std::string &a, const std::string &b);

} // namespace kf::ref
