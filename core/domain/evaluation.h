#pragma once
// What the engine says of a candidate kernel: its verdict, the trials behind it, how its timed
// runs were checked, its time (docs/verification.md).
#include "kernel/candidate.h"
#include "kernel/compile_output.h"
#include "problem/problem.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kf {

enum class Verdict {
    Queued,
    Compiling,
    CompileError,
    LaunchError,
    Wrong,
    Racy,
    Correct,
    Crashed,
    TimedOut,
    Suspect,
    NeedsGpu,
    Sanitizer,    // passed verification, then compute-sanitizer memcheck found errors (docs/search.md)
    Inconsistent, // passed verification, then a timed run's output failed its check (docs/verification.md)
    EngineError   // the engine could not judge it (out of GPU memory, a failure of its own): not the kernel's verdict
};
std::string toString(Verdict); // "compile error", "timed out", ...
std::optional<Verdict> parseVerdict(std::string_view);

struct Timing {
    double medianMs = 0, minMs = 0, maxMs = 0, meanMs = 0;
    double p10Ms = 0, p90Ms = 0; // the spread
    int trials = 0;
};

struct TrialResult {
    int index = 0;
    std::uint64_t seed = 0;
    std::string distribution; // "uniform", ..., "offset" (the large-offset trial)
    bool randomParams = false;
    double maxScaledError = 0; // max |out-ref| / (|ref| + rms(ref))
    double maxAbsError = 0;
    double tolerance = 0; // the one this trial was judged at
    bool passed = false;
    bool kernelbenchPassed = false; // allclose(out, eager, atol=tol, rtol=tol)
    // The largest |out - eager| / (atol + rtol |eager|) of that check: above 1 it failed, and by how much.
    double kernelbenchRatio = 0;
    std::int64_t unwritten = 0; // elements still poisoned
    std::int64_t nonFinite = 0; // NaN/Inf where the reference is finite
    std::string note;
};

// What the compute-sanitizer gate made of a candidate (docs/search.md, "The sanitizer gate"). The
// search fills it in; a worker never does.
struct SanitizerCheck {
    std::string outcome;            // "clean", "finding" or "unchecked" (the tool could not judge it)
    std::vector<std::string> tools; // those that ran, in order: "memcheck", then "racecheck"
    double seconds = 0;             // wall time of the runs, tool and worker start-up included
    std::string note;               // the finding's summary, or why it was not checked
    std::int64_t sameAs = 0;        // the candidate with the same source whose check this reuses
};

// How the timed runs of a candidate were checked and judged (docs/verification.md).
struct TimingCheck {
    bool checked = true;         // false only for a measurement of the checks' own cost
    int runs = 0;                // timed runs whose outputs were compared with their reference
    int inputSets = 0;           // verified trials' input sets the timed runs cycled through
    double worstScaledError = 0; // over every checked timed run
    double physicalFloorMs = 0;  // the FLOPs at the fastest rate, the bytes at the highest bandwidth
    double launchMs = 0;         // one empty launch on this GPU
    std::string floorNote;       // set where the floor check cannot tell (the floor is under a launch)
    double wallSeconds = 0;      // the whole timing step: module load, warm-up, runs, checks
    double checkSeconds = 0;     // of which poisoning and comparing, outside the event windows
};

// The answer to a timing request: a time only when every timed run passed its check.
struct TimedRun {
    std::optional<Timing> timing;
    Verdict verdict = Verdict::Correct; // correct, inconsistent or suspect
    std::string reason;
    TimingCheck check;
};

struct EvalResult {
    Verdict verdict = Verdict::Queued;
    std::string reason;
    Precision precision = Precision::FP32;
    Policy policy = Policy::Strict;
    std::vector<TrialResult> trials;
    double maxScaledError = 0;
    bool kernelbenchPassed = false;
    std::optional<Timing> timing;
    double floorMs = 0;                               // roofline floor at the declared precision
    std::map<std::string, KernelResources> resources; // from the loaded module
    std::string compileLog;
    double compileSeconds = 0;
    std::string sanitizerReport;             // the tool's output for a finding (or for a run that could not judge)
    std::optional<SanitizerCheck> sanitizer; // absent until the gate has looked at it
    std::uint64_t seed = 0;                  // the evaluation's random seed: `eval --seed` replays its inputs
    std::optional<TimingCheck> timingCheck;
    std::int64_t peakGpuBytes = 0; // the most GPU memory in use while the worker judged it
};

// Takes a timing step's answer into a verified result: its time, its check, and its verdict
// where the timed runs changed it (inconsistent, suspect).
void applyTimedRun(EvalResult &, const TimedRun &);

} // namespace kf
