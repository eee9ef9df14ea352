#pragma once
// The report of a suite run, computed from its state alone (so a recorded state gives the same
// numbers anywhere): per problem the status, times, speedups, policy and why it failed; overall
// KernelBench's fast_p and the geometric-mean speedup, against eager PyTorch and against
// torch.compile where it was timed (docs/kernelbench.md, "The report").
#include "suite/suite_state.h"

#include <nlohmann/json.hpp>

#include <string>

namespace kf {

// fast_p as KernelBench defines it: the fraction of problems with a correct kernel whose speedup
// is above p. fast_0 is the fraction correct.
struct FastP {
    int over = 0; // problems counted (the denominator)
    int correct = 0, faster = 0, faster2 = 0;
    double fast0 = 0, fast1 = 0, fast2 = 0;
    double geomean = 0; // geometric mean of the correct problems' speedups, 0 when none
};

struct SuiteSummary {
    int problems = 0, done = 0, failed = 0, unfinished = 0;
    int measured = 0;        // problems with a time beyond their budget recorded
    double overheadMean = 0; // their mean time beyond the budget, seconds
    FastP eager;             // over every problem of the suite
    FastP compile;           // over the problems with a torch.compile time
};

SuiteSummary summarize(const SuiteState &);
// "correct", "no correct kernel", "compiled only", "failed", "not finished"
std::string reportStatus(const SuiteEntry &);

std::string suiteMarkdown(const SuiteState &);
nlohmann::json suiteReportJson(const SuiteState &);

} // namespace kf
