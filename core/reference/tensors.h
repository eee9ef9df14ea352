#pragma once
// Inputs and parameters per trial (internal to the worker; includes libtorch).
#include "problem/problem.h"

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

namespace kf::ref {

torch::Dtype torchDtype(DType);
bool isFloating(DType);

// What one trial draws: the input distribution ("uniform", ..., or "offset" for the
// large-offset trial), and whether parameters are random or the problem's initialiser.
struct TrialSpec {
    int index = 0;
    std::uint64_t seed = 0;
    std::string distribution;
    bool randomParams = false;
    bool loose = false; // judged at loose tolerance whatever the policy (the offset trial)
};

// The rotation of the design: the problem's own distribution first, then the others it allows;
// trials after the first draw random parameters; normalization problems add the offset trial.
std::vector<TrialSpec> trialPlan(const Problem &, int trials, std::uint64_t baseSeed);

std::vector<torch::Tensor> makeInputs(const Problem &, const TrialSpec &, torch::Device);
std::vector<torch::Tensor> makeParams(const Problem &, const TrialSpec &, torch::Device);

// A fresh output buffer filled with poison: NaN for floats, the lowest value for integers.
torch::Tensor poisoned(const TensorSpec &, torch::Device);

} // namespace kf::ref
