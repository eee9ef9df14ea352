#pragma once
// What a suite run knows about each of its problems, kept in OUT/suite.json and rewritten after
// every change, so that an interrupted run resumes where it stopped (docs/kernelbench.md).
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace kf {

namespace suite_status {
inline constexpr const char *Pending = "pending"; // not searched yet
inline constexpr const char *Running = "running"; // searched, not finished (interrupted): resumed next time
inline constexpr const char *Done = "done";       // the search stopped normally
inline constexpr const char *Failed = "failed";   // the search could not run; `reason` says why
} // namespace suite_status

struct SuiteEntry {
    std::string file;    // the problem file, relative to the suite's folder
    std::string name;    // the problem's name ("" when the file does not parse)
    std::string session; // its session, relative to the out folder
    std::string status = suite_status::Pending;
    std::string reason;             // why it failed, or how its search stopped
    std::string policy;             // the tolerance policy it was judged under
    double eagerMs = 0;             // eager PyTorch (the worker's libtorch), 0 when unknown
    double bestMs = 0;              // the fastest correct kernel, 0 when none
    std::string precision;          // the fastest kernel's declared precision
    bool kernelbenchPassed = false; // KernelBench's own allclose check passed on every trial
    double compileMs = 0;           // torch.compile (tools/compile-baseline.py), 0 when not measured
    std::string compileNote;        // why there is no torch.compile time
    bool compileTried = false;      // timed, or refused by torch.compile: a resumed run does not ask again
    int candidates = 0, correct = 0, rounds = 0;
    double seconds = 0; // search time spent on it, all runs together
    // Time spent on it beyond its search budget, all runs together: starting and loading the
    // workers, the eager baseline, torch.compile, stopping (docs/kernelbench.md).
    double overheadSeconds = 0;
    std::string gpu; // the GPU it ran on

    double speedup() const { return bestMs > 0 && eagerMs > 0 ? eagerMs / bestMs : 0; }
    double speedupOverCompile() const { return bestMs > 0 && compileMs > 0 ? compileMs / bestMs : 0; }
    bool isCorrect() const { return bestMs > 0; }
};

struct SuiteState {
    int version = 1;
    std::string folder; // where the problems are (as given)
    std::string generator;
    nlohmann::json settings = nlohmann::json::object(); // the search settings of every problem
    double budgetPerProblem = 0;                        // seconds
    std::vector<SuiteEntry> problems;

    SuiteEntry *find(const std::string &file);
};

void to_json(nlohmann::json &, const SuiteEntry &);
void from_json(const nlohmann::json &, SuiteEntry &);
void to_json(nlohmann::json &, const SuiteState &);

// Errors name the file and the entry that is wrong.
Result<SuiteState> suiteStateFromJson(const nlohmann::json &, const std::string &where);
Result<SuiteState> readSuiteState(const std::string &path);
// Writes a temporary file and renames it over `path`: a crash never leaves half a state.
Status writeSuiteState(const std::string &path, const SuiteState &);
// Writes `text` the same way.
Status writeFileAtomically(const std::string &path, const std::string &text);

} // namespace kf
