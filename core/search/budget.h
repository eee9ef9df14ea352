#pragma once
// Where a search run's wall time went (docs/search.md, "Where the budget goes"): one clock on the
// search's thread puts each second into the part the search was waiting on, so the parts add up to
// the run's wall time. The session keeps the last run's account in meta "budget" and each run's in
// its "stopped" event; the CLI prints it as the search's last line and `report` prints it too.
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace kf {

struct BudgetSplit {
    double setup = 0;     // workers, the problem, the eager baseline, the ceilings, the sanitizer probe
    double compiling = 0; // waiting on the compile pool
    double verifying = 0; // evaluations, less the part in timing
    double timing = 0;    // evaluations while their GPU lock was held for timing (per GPU)
    double gate = 0;      // waiting on compute-sanitizer: the final gate, taking the GPU back from a run
    double idle = 0;      // waiting on none of these: the generator, the search's own writing
    double total() const { return setup + compiling + verifying + timing + gate + idle; }
};

// One run's account, as the session keeps it.
struct RunBudget {
    double budgetSeconds = 0;  // the time budget; 0: none
    double elapsedSeconds = 0; // wall time of the run, setup included
    BudgetSplit split;
    // compute-sanitizer's runs while the GPU waited on the generator or the compiler: their time
    // is in the part the search was in (idle, compiling), not in `gate`.
    double gateBackgroundSeconds = 0;
    int gateRuns = 0, gateFindings = 0; // kernels run under the tool in this run, and those demoted
    std::int64_t bestNode = 0;          // what the run reports as its best (0: none)
    // Its gate: "clean", "unchecked" (the tool could not judge it, or there was no time or chance
    // to run it: `bestGateNote` says which), "off" (the gate is off), "" without a best.
    std::string bestGate, bestGateNote;
    std::int64_t bestCheckedNode = 0; // when the best is not clean: the fastest kernel that is
    double bestCheckedMs = 0;
};

void to_json(nlohmann::json &, const RunBudget &);
void from_json(const nlohmann::json &, RunBudget &); // missing keys keep their defaults
// None when the JSON is not an object (a session from before the budget was kept, or a damaged one).
std::optional<RunBudget> readRunBudget(const nlohmann::json &);

std::string secondsText(double seconds); // "12.3 s"
// "setup 8.1 s, compiling 20.3 s, verifying 40.0 s, timing 30.2 s, gate 11.0 s, idle 4.1 s"
std::string describe(const BudgetSplit &);
// The run's account in one line: "budget 120 s, used 118.9 s: setup ... ; best #42 passed the gate"
std::string describe(const RunBudget &);

class BudgetClock {
public:
    enum Part { Setup, Compiling, Verifying, Timing, Gate, Idle };

    BudgetClock();    // starts now, in Setup
    void enter(Part); // the time since the last change goes to the part it was in
    Part part() const { return m_part; }
    // Moves seconds between parts (an evaluation's time spent holding the GPU lock, from
    // verifying to timing); at most what `from` holds.
    void shift(Part from, Part to, double seconds);
    BudgetSplit split() const; // the current part counted up to now
    double elapsed() const;

private:
    double &slot(Part);
    using Clock = std::chrono::steady_clock;
    Clock::time_point m_start, m_since;
    Part m_part = Setup;
    BudgetSplit m_split;
};

} // namespace kf
