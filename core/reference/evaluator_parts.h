#pragma once
// What the evaluator keeps of a verified candidate between its verification and its timing
// (internal to evaluator.cpp and timed_runs.cpp).
#include "evaluator.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kf::ref {

// One trial's data. While verifying, `refs` are the fp64 reference outputs; a trial kept for the
// timed runs holds them in fp32 instead (fp64 outputs and integer ones in their own type), which
// halves what a check reads and what the GPU must hold. The rounding to fp32 is at most 2^-24 of
// |ref|, and each check allows exactly that much more (`slack`).
struct Evaluator::TrialData {
    TrialSpec spec;
    double tolerance = 0;
    std::vector<torch::Tensor> inputs, params;
    std::vector<torch::Tensor> refs;
    std::vector<double> rms;                // per output, of the fp64 reference
    std::vector<std::uint64_t> inputHashes; // per input, then per parameter
};

struct Evaluator::Prepared {
    Candidate candidate;
    ResolvedPlan plan;
    std::string cubin; // the module is loaded again from it for timing
    std::map<std::string, std::string> names;
    std::unique_ptr<gpu::Module> module;
    std::map<std::string, torch::Tensor> scratch;
    std::vector<TrialData> sets; // the verified trials kept for the timed runs
    std::uint64_t seed = 0;
    std::uint64_t salt = 0; // of the input hashes; the kernel never sees it
    EvalResult result;
};

// The slack of a reference kept in fp32: one rounding, relative to |ref|.
inline constexpr double kFp32RefSlack = 1.0 / 16777216.0;

// Median, min, max, mean and spread of a list of times (sorted in place).
Timing summarize(std::vector<double> &ms);

std::string fmt(double v);

// "out of memory" from libtorch or the CUDA runtime: the engine's limit, not the kernel's fault.
bool isOutOfMemory(const std::string &what);

} // namespace kf::ref
