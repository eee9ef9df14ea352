#pragma once
// What a running search reports, through one plain callback: the CLI prints a line per event and
// the GUI's facade turns them into signals. Node ids are the session store's, so a listener can
// read anything more it needs from the store.
//
// The callback runs on the thread that called Search::run() or on a pool thread while results
// arrive, but never two at a time; it should return quickly.
#include "domain/evaluation.h"
#include "search/budget.h"

#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

namespace kf {

enum class StopReason { Rounds, TimeBudget, Cancelled, NoMoreIdeas, Error, TokenBudget, CostBudget };
// "rounds", "time budget", "cancelled", "no more ideas", "error", "token budget", "cost budget"
std::string toString(StopReason);

struct SearchStarted {
    std::string problem, gpu, generator;
    int firstRound = 1;       // > 1 when a session is resumed
    double eagerMs = 0;       // 0 when the baseline is unknown
    double budgetSeconds = 0; // the time budget, 0: none; it counts from the start of setup
    double setupSeconds = 0;  // what setup took of it
};

struct RoundStarted {
    int round = 0;
    std::int64_t node = 0;
    double bestMs = 0; // best correct time before this round, 0 when none yet
};

struct IdeaProposed {
    int round = 0;
    std::int64_t node = 0;
    std::string ideaId, title, text, why;
    std::int64_t parentKernel = 0; // the candidate it builds on (0: from the reference)
};

struct CandidateQueued {
    int round = 0;
    std::int64_t node = 0, ideaNode = 0;
    std::int64_t repairOf = 0; // the failed candidate it repairs, 0 for a first draft
    std::string title;
};

struct CandidateCompiled {
    std::int64_t node = 0;
    double seconds = 0;
    bool cached = false;
    int registers = 0, spills = 0; // the busiest kernel's
};

struct CompileFailed {
    std::int64_t node = 0;
    std::string reason; // the first error, or why nothing could compile it
};

struct CandidateVerified {
    std::int64_t node = 0;
    Verdict verdict = Verdict::Queued;
    std::string reason;
    double maxScaledError = 0;
};

struct CandidateTimed {
    std::int64_t node = 0;
    Timing timing;
    double speedup = 0;   // eager / median, 0 when the baseline is unknown
    bool newBest = false; // it is now the fastest correct kernel of the session
};

// The sanitizer gate (docs/search.md): the kernel the search would report as its best runs once
// under compute-sanitizer, while the GPU would otherwise wait on the generator or the compiler
// (then the top-k's other kernels too), or at the end, in time the budget kept for it.
struct CandidateSanitizing {
    std::int64_t node = 0;
    std::vector<std::string> tools; // "memcheck", and "racecheck" for kernels with shared memory
    bool background = false;        // while the GPU waits on something else; false: the final gate
    double estimateSeconds = 0;     // how long the run is expected to take
};

struct CandidateSanitized {
    std::int64_t node = 0;
    SanitizerCheck check;               // "clean", "finding" or "unchecked", the tools, the seconds, the note
    Verdict verdict = Verdict::Correct; // after the gate: sanitizer (memcheck) or racy (racecheck) for a finding
    // A run in the background stopped to give the GPU back for timing: nothing is known, `check`
    // is empty and the kernel waits for its next chance.
    bool putOff = false;
};

struct RoundFinished {
    int round = 0;
    std::int64_t node = 0;
    double bestMs = 0; // best correct time of the session so far (never worse than before)
    std::int64_t bestNode = 0;
    std::string bestIdea;   // title of the idea that produced it
    double roundBestMs = 0; // best correct time among this round's candidates, 0 when none
    int candidates = 0, correct = 0;
    std::int64_t tokens = 0;         // prompt + completion tokens the generator used this round
    double cost = 0;                 // and what they cost (LLM generators)
    int sanitized = 0, findings = 0; // kernels the sanitizer gate ran this round, and those it demoted
    double sanitizerSeconds = 0;
    // The best's gate so far: "clean", "pending" (not checked yet: it will be before it is
    // reported as the search's best), "unchecked" (the tool could not judge it), "off", "".
    std::string bestGate;
};

struct SearchFinished {
    StopReason reason = StopReason::Rounds;
    std::string detail; // for people ("after 120 s", the error)
    int roundsRun = 0;  // rounds started by this run
    double bestMs = 0;
    std::int64_t bestNode = 0;
    RunBudget budget; // where the run's time went, and the best's gate
};

// Where the run's time has gone so far and what the gate is doing, for a live view (the
// workbench's chart): sent after setup, as each round ends, as the gate starts and ends a run, and
// before SearchFinished.
struct BudgetStatus {
    RunBudget budget;          // so far; bestGate "pending" while the best waits for the gate
    double reserveSeconds = 0; // the end of the time budget kept for the gate to check the best
    std::int64_t gating = 0;   // the kernel under compute-sanitizer now, 0 when none
    bool finalGate = false;    // that run is the final gate (else it runs while the GPU would idle)
};

struct SearchMessage { // anything else worth a line: the baseline, a worker restart
    std::string text;
};

using SearchEvent = std::variant<SearchStarted, RoundStarted, IdeaProposed, CandidateQueued, CandidateCompiled,
                                 CompileFailed, CandidateVerified, CandidateTimed, RoundFinished, SearchFinished,
                                 SearchMessage, CandidateSanitizing, CandidateSanitized, BudgetStatus>;
using SearchEventCallback = std::function<void(const SearchEvent &)>;

// The event's kind as the session's event table names it ("round-started", ...).
std::string eventKind(const SearchEvent &);
// One line for people, without the kind ("#12 correct: 0.512 ms, 3.91x eager").
std::string describe(const SearchEvent &);

} // namespace kf
