#pragma once
// The trajectory of a session, as in the CRFM Conv2D table: after each round, the best correct
// time so far, its percentage of the reference (eager time / best time × 100) and the idea that
// produced it. Computed from the candidates themselves, so it is right for any session, even one
// whose last round was cut short.
#include "search/budget.h"
#include "store/session_store.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kf {

struct TrajectoryRow {
    int round = 0;
    double bestMs = 0; // best correct median of rounds <= this one; 0 when none yet
    std::int64_t bestNode = 0;
    std::string idea;                // title of the idea (or hand-written kernel) that produced it
    double percentOfReference = 0;   // eager / best × 100; 0 when either is unknown
    bool improved = false;           // this round produced a new best
    double roundBestMs = 0;          // fastest correct candidate of this round
    int candidates = 0, correct = 0; // this round's candidates with a verdict, and the correct ones
};

// What the sanitizer gate did over the whole session (runs that reused a result do not count).
struct SanitizerTotals {
    int checked = 0, findings = 0, unchecked = 0;
    double seconds = 0;
};

struct Trajectory {
    std::string problem, gpu, generator;
    double eagerMs = 0;
    std::vector<TrajectoryRow> rows; // one per round, in round order
    SanitizerTotals sanitizer;
    std::optional<RunBudget> budget; // where the last search run's time went (meta "budget")
};

// The trajectory from nodes (round nodes give the rows; candidates give the times).
Trajectory trajectoryFromNodes(const std::vector<NodeRecord> &nodes, double eagerMs);
Result<Trajectory> readTrajectory(const SessionStore &);

// A fixed-width table for a terminal, with a header naming the problem, GPU and eager time, and
// the last run's budget split and the best's gate as its last line.
std::string trajectoryTable(const Trajectory &);
// CSV (RFC 4180) with a header line:
// round,best_ms,percent_of_reference,speedup,best_node,idea,improved,round_best_ms,candidates,correct
std::string trajectoryCsv(const Trajectory &);

} // namespace kf
