#pragma once
// A search on every problem of a folder (kernelforge-cli suite; docs/kernelbench.md). Problems
// run in parallel, one at a time per GPU of the pool, each in its own session in OUT/sessions/;
// the problems of one GPU share its workers, compile processes and torch.compile timer, which
// start once. OUT/suite.json records each problem's state after every
// change, and OUT/report.md and report.json are rewritten as problems finish. A second run with
// the same OUT skips finished problems, resumes the sessions of interrupted ones with what is
// left of their budget, and searches the rest.
#include "eval/compile_pool.h"
#include "eval/worker_pool.h"
#include "problem/problem.h"
#include "search/events.h"
#include "search/session_setup.h"
#include "search/settings.h"
#include "suite/compile_timer.h"
#include "suite/suite_state.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kf {

class Generator;

struct SuiteOptions {
    std::string folder; // the problem files (*.toml, recursively)
    std::string out;    // state, sessions and reports
    std::string generator = "builtin";
    nlohmann::json generatorSettings; // for LLM generators
    SearchSettings settings;          // every problem's; time_budget_s is the budget per problem
    PoolConfig pool;                  // one problem at a time per GPU in pool.gpus
    CompilePoolConfig compiler;       // its processes are shared out among the GPUs' searches
    bool retryFailed = false;         // search problems that failed before again
    // torch.compile times: a command that serves tools/compile-baseline.py's --json lines (a
    // problem file's path a line on stdin; empty: not measured), one per GPU, run before each
    // problem's search.
    std::vector<std::string> compileBaseline;
    std::string compileNote; // why torch.compile is not measured, for the report
};

// One line for people about one problem ("3_conv_relu_maxpool: round 2: best 0.412 ms").
using SuiteProgress = std::function<void(const std::string &problem, const std::string &line)>;

class SuiteRunner {
public:
    explicit SuiteRunner(SuiteOptions options);

    // Runs until every problem is done or failed, or `cancel` is set (the running searches stop
    // at once and stay resumable). Errors: the out folder cannot be written, its state is not a
    // suite's, or there is no GPU ("no-gpu": the first search found none, and nothing else ran).
    Status run(const std::atomic<bool> &cancel, SuiteProgress progress = {});

    const SuiteState &state() const { return m_state; }
    std::string statePath() const;
    std::string reportPath(const std::string &extension) const; // "md", "json"

private:
    // What the problems of one GPU share.
    struct Lane {
        CompilePool &compiler;
        WorkerPool &workers;
        CompileTimer *timer; // null when torch.compile is not measured
    };
    Status prepare();
    void runOne(SuiteEntry entry, Lane &lane, const std::atomic<bool> &cancel);
    // False when the problem is not searched now: its budget was spent before, or `cancel` came
    // while torch.compile was timed. `settings` are left with what remains of the budget.
    bool readyToSearch(SuiteEntry &entry, const Problem &problem, SearchSettings &settings, const std::string &file,
                       Lane &lane, const std::atomic<bool> &cancel);
    // Sets the entry's status from how the search ended; returns the seconds its budget counted.
    double runSearch(SuiteEntry &entry, const Problem &problem, const std::shared_ptr<Generator> &generator,
                     const SearchSettings &settings, Lane &lane, SessionStore &store, const std::atomic<bool> &cancel);
    // Fills the entry from its session, says how it went and records it.
    void finish(SuiteEntry &entry, const SessionStore &store, const SearchSettings &settings, const std::string &label,
                std::chrono::steady_clock::time_point began, double budgeted);
    void measureCompile(SuiteEntry &entry, const std::string &file, Lane &lane, const std::atomic<bool> &cancel);
    void update(const SuiteEntry &entry);
    Status save();
    void say(const std::string &problem, const std::string &line);

    SuiteOptions m_options;
    SuiteState m_state;
    SuiteProgress m_progress;
    std::vector<std::string> m_queue; // files still to run, in order
    std::size_t m_next = 0;
    std::mutex m_mutex;           // guards m_state, m_next, m_error and the files in OUT
    std::optional<Error> m_error; // what stops the whole run (no GPU, a write that failed)
    std::atomic<bool> m_abort{false};
};

} // namespace kf
