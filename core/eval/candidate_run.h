#pragma once
// One candidate from start to finish, the way the CLI's `eval`, the workbench's Re-benchmark and
// its Profile all run it: start a worker, check the GPU, load the problem, take the session's pinned
// eager baseline (or measure one), read the GPU's ceilings, evaluate (verification, then the checked
// timed runs), and fill the roofline floor. Recording the result is the caller's: a session, JSON.
#include "eval/worker_client.h"

#include <functional>
#include <map>
#include <optional>
#include <string>

namespace kf {

struct CandidateRunOptions {
    WorkerConfig worker; // may wrap the worker (Nsight Compute for Profile)
    Policy policy = Policy::Strict;
    int trials = 5;
    int timingTrials = 100; // 0: verify only, no baseline needed
    int baselineTrials = 100;
    std::optional<std::uint64_t> seed;      // replays an evaluation
    std::optional<BaselineResult> baseline; // a session's: used as it is, never measured again
    std::string cubin;                      // compiled already, or "" to let the worker compile
    std::map<std::string, std::string> loweredNames;
    std::optional<milliseconds> timeout; // per step; default from the baseline
    // Without a GPU, compile for this architecture so the caller can still say whether it compiles
    // ("" leaves it out).
    std::string compileArchWithoutGpu;
    // Sees the worker while it runs (so another thread can interrupt it), then nullptr.
    std::function<void(WorkerClient *)> track;
};

struct CandidateRun {
    Hello hello;
    std::optional<EvalResult> result;       // absent without a GPU
    std::optional<BaselineResult> baseline; // the pinned one, or the one measured here
    bool baselineMeasured = false;          // true when measured by this run (a session may keep it)
    std::optional<Error> baselineError;     // the baseline could not be measured: no speedup
    std::optional<CompileOutput> compiled;  // without a GPU, when compileArchWithoutGpu was given
    std::string stderrTail;                 // the worker's last lines (a wrapper's messages)
};

// Errors: the worker did not start (code from WorkerClient::start), the problem did not load
// ("reference", "parse", "engine", ...), or the evaluation request failed ("engine" when the
// engine could not judge the kernel). A kernel's own failure is a result, not an error.
Result<CandidateRun> runCandidate(const Problem &, const std::string &source, const CandidateRunOptions &);

} // namespace kf
