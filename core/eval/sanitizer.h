#pragma once
// The compute-sanitizer gate's runs (docs/search.md, "The sanitizer gate"). A candidate is checked
// by a fresh worker started under the tool:
//   compute-sanitizer --tool memcheck --error-exitcode 86 --print-limit 20 --report-api-errors no
//       --log-file FILE --kernel-name kns=NAME <worker command>
// which loads the problem and verifies the candidate once (one trial, no timing). Only the
// candidate's own kernels are instrumented, so the libtorch kernels of the reference run at full
// speed and are not judged. The tool writes to FILE, never to the worker's stdout, which carries
// the protocol. One process per tool: memcheck always, racecheck when the kernels use shared
// memory. Before the gate is used, a probe runs a known-good kernel under each tool, because on
// some virtualised GPUs the tool is installed but refuses the device.
#include "eval/worker_client.h"

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kf {

enum class SanitizerTool { Memcheck, Racecheck };
std::string toString(SanitizerTool); // "memcheck", "racecheck"

// The tool's command: KF_SANITIZER when set (a path, or a command line: tests use a stand-in),
// else compute-sanitizer on PATH, in $CUDA_HOME/bin, in /usr/local/cuda/bin. Empty when none.
std::vector<std::string> findSanitizer();
// Where findSanitizer() looked, for the message that says it found nothing.
std::string sanitizerSearchPlaces();

// The exit status the tool is asked to use when it finds something.
inline constexpr int kSanitizerExitCode = 86;

// The --kernel-name filter for kernels named as in @launch lines. A C++ kernel's symbol is mangled
// and its demangled name carries template arguments, but both contain the bare identifier, so the
// filter matches on that: kns=NAME for one kernel, a regex alternation for several.
std::string sanitizerKernelFilter(const std::vector<std::string> &kernels);

// The whole command line of one run.
std::vector<std::string> sanitizerArgv(const std::vector<std::string> &tool, SanitizerTool which,
                                       const std::vector<std::string> &kernels, const std::string &logFile,
                                       const std::vector<std::string> &worker);

// What the tool's output says: the error count of its summary and the first finding.
struct SanitizerLog {
    bool summary = false; // an "ERROR SUMMARY" line was found
    int errors = 0;
    std::string first; // the first reported problem, without the "========= " prefix
    // The tool's own failure ("Internal Sanitizer Error: ..."), when it reported one: it counts in
    // the summary's errors, but it is no hazard the tool found in the kernel.
    std::string toolFailure;
};
SanitizerLog parseSanitizerLog(const std::string &log);
// The first `limit` characters and the last lines of a long report, so a session stays small.
std::string trimSanitizerReport(const std::string &log, std::size_t limit = 16 * 1024);

// One candidate for the gate.
struct SanitizeRequest {
    std::string key; // the worker's module key
    std::string source;
    std::vector<std::string> kernels; // as written in the @launch lines, for the filter
    Policy policy = Policy::Strict;
    std::vector<SanitizerTool> tools;    // in order; a finding ends the list early
    std::optional<milliseconds> timeout; // per run; default sanitizerTimeout()
};

struct SanitizeResult {
    SanitizerCheck check;                 // outcome, tools that ran, seconds, note
    std::optional<SanitizerTool> finding; // the tool that found something
    bool toolFailed = false;              // what it found is its own failure on the kernel, not a hazard
    std::string report;                   // its output (trimmed); or the output of a run that could not judge
    std::optional<EvalResult> verdict;    // the worker's verdict under the last tool, when it answered
    bool cancelled = false;               // stopped from outside: nothing is known
};

// Time for the verification under the tool: ten times the normal one for a single trial (memcheck
// slows an instrumented kernel ten to a hundred times; the reference is not instrumented).
milliseconds sanitizerTimeout(double baselineMs);

// Everything a run needs besides the candidate: the tool, the worker command it wraps (with its
// environment and time-outs) and the problem, sent by content like any load.
struct SanitizerSetup {
    std::vector<std::string> tool;
    WorkerConfig worker;
    double baselineMs = 0;
};

// `track` is called with the client before it starts and with nullptr when it is done, so that a
// cancel from another thread can interrupt it; `cancel` is checked between steps.
using ClientTracker = std::function<void(WorkerClient *)>;

SanitizeResult runSanitizer(const SanitizerSetup &, const Problem &, const SanitizeRequest &,
                            const ClientTracker &track = {}, const std::atomic<bool> *cancel = nullptr);

// Whether the tool works with this worker command on this machine.
struct SanitizerProbe {
    bool memcheck = false, racecheck = false;
    std::string command; // the tool's command line
    std::string version; // "2025.3.1.0", when the tool says
    std::string reason;  // why memcheck (the gate) or racecheck is off
    double seconds = 0;
    bool cancelled = false;
};
// Runs a known-good kernel once under each tool. The answer is kept for the process, per tool and
// worker command, so a second search does not pay for it again (a cancelled probe is not kept).
SanitizerProbe probeSanitizer(const SanitizerSetup &, const ClientTracker &track = {},
                              const std::atomic<bool> *cancel = nullptr);

// The probe's problem (y = 2x on 4096 floats) and kernel (through shared memory, so that racecheck
// has something to look at), for tests.
Problem sanitizerProbeProblem();
std::string sanitizerProbeKernel();

} // namespace kf
