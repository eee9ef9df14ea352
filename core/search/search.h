#pragma once
// The round loop of the design ("Search"): top-k correct kernels and the bank go to the generator,
// which proposes ideas not yet tried and drafts implementations of each; drafts are compiled in
// parallel (CompilePool), judged and timed on the GPUs (WorkerPool), and every result goes to the
// session store as it arrives. docs/search.md describes the loop, the stops and what the store holds.
//
// A Search runs on one thread (run() blocks); cancel it from any other through the flag given to
// run(). Every stop (rounds, time budget, cancel, no more ideas, an error) leaves a session that
// reopens with every finished result, and a later resume() continues at the next round.
#include "eval/compile_pool.h"
#include "eval/worker_pool.h"
#include "gen/generator.h"
#include "search/budget.h"
#include "search/events.h"
#include "search/gate_runner.h"
#include "search/records.h"
#include "search/settings.h"
#include "search/state.h"
#include "store/session_store.h"

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kf {

class Search {
public:
    // `store` is a session created for `problem` (SessionStore::create); it may already hold
    // rounds of the same problem, and the search then continues after them.
    Search(Problem problem, std::shared_ptr<Generator> generator, SearchSettings settings, WorkerPool &pool,
           CompilePool &compiler, SessionStore &store);
    ~Search();
    Search(const Search &) = delete;
    Search &operator=(const Search &) = delete;

    // A Search that continues the session in `store`: the problem comes from the session, and the
    // settings too unless `settings` overrides them (the override is written back). Fails when the
    // session's problem does not parse or the store is read-only.
    static Result<std::unique_ptr<Search>> resume(SessionStore &store, std::shared_ptr<Generator> generator,
                                                  WorkerPool &pool, CompilePool &compiler,
                                                  std::optional<SearchSettings> settings = {});

    void setEventCallback(SearchEventCallback callback) { m_onEvent = std::move(callback); }

    // Runs rounds until a stop. A stop is not an error: stopReason() says which it was. Errors
    // are what prevents a search from starting or going on: no GPU ("no-gpu"), the problem does
    // not load, the generator cannot work on the problem, the store cannot be written.
    Status run(const std::atomic<bool> &cancel);

    StopReason stopReason() const { return m_reason; }
    const std::string &stopDetail() const { return m_detail; }
    const SearchState &state() const { return m_state; }
    const SearchSettings &settings() const { return m_settings; }
    const Problem &problem() const { return m_problem; }
    std::int64_t rootNode() const { return m_root; }
    int roundsRun() const { return m_roundsRun; }
    // Where the last run's time went and the best's gate (also in the session's meta "budget").
    const RunBudget &budget() const { return m_budget; }

private:
    // A candidate on its way through compile, evaluation and maybe repair.
    struct Pending {
        std::int64_t node = 0, ideaNode = 0;
        int round = 0;
        std::string title, source;
        DraftInfo draft;
        std::vector<std::string> kernels;
        std::optional<CompileOutput> compiled;
        std::optional<EvalResult> result; // set once its verdict is stored
    };
    struct Tally { // this round's candidates
        int candidates = 0, correct = 0;
        std::vector<std::pair<double, std::int64_t>> times; // the correct ones: median, node
        int sanitized = 0, findings = 0;
        double sanitizerSeconds = 0;
        std::pair<double, std::int64_t> best() const; // the fastest correct one (0, 0 when none)
    };
    // The sanitizer gate (search_gate.cpp).
    struct Gate {
        bool on = false;
        bool racecheck = false;
        SanitizerProbe probe;
        std::string why;                                                         // why it is off
        std::string message;                                                     // the line that says so, once per run
        std::map<std::string, std::pair<std::int64_t, SanitizeResult>> bySource; // content hash -> first run
        std::unique_ptr<GateRunner> runner;     // the runs while the GPU waits on something else
        double perTool = 0;                     // the longest measured run of one tool on this problem (s); 0: none yet
        double perToolFallback = 0;             // before any: the probe's time per tool plus the problem's load
        int runs = 0, findings = 0;             // of this run() (each round's are in its summary too)
        int applied = 0, appliedAtRoundEnd = 0; // checks applied, in all and when the last round ended
        double backgroundSeconds = 0;
        // The stretch the GPU waits in now (on the generator, the compiler), from the start of a
        // round or of a repair batch to its evaluation; what the last one of each kind lasted.
        enum Stretch { RoundStretch, RepairStretch };
        Stretch stretch = RoundStretch;
        std::int64_t stretchSinceNs = 0; // 0: not in one
        double lastStretch[2] = {0, 0};
        std::int64_t reservedFor = 0; // the kernel the reserve at the end of the budget is kept for
        std::string bestNote;         // why the best is left unchecked at the end
    };
    // What the watcher may cut at a stop: compiles, evaluations; the final gate only on a cancel.
    enum Phase { Idle, Compiling, Evaluating, Gating };

    Status prepare();
    Status restore();
    Status startWorkers();
    void runRound(int round);
    std::vector<Idea> proposeIdeas(int round, Usage &usage);
    std::vector<Pending> draftCandidates(int round, const std::vector<std::pair<Idea, std::int64_t>> &ideas,
                                         Usage &usage);
    std::int64_t addCandidate(Pending &, std::int64_t parent);
    void processBatch(std::vector<Pending> batch, Usage &usage);
    void compileBatch(std::vector<Pending> &batch);
    void evaluateBatch(std::vector<Pending> &batch);
    std::vector<Pending> repairBatch(const std::vector<Pending> &batch, Usage &usage);
    void finish(Pending &, EvalResult result);
    EvalResult failure(const Pending &, Verdict, std::string reason) const;
    void leaveQueued(std::vector<Pending> &batch);
    void finishIdeas(const std::vector<std::pair<Idea, std::int64_t>> &ideas);
    void setupGate(SanitizerProbe);
    nlohmann::json gateJson() const;
    std::vector<KernelRecord> awaitingGate() const;
    SanitizeRequest sanitizeRequest(const KernelRecord &) const;
    double gateEstimate(const SanitizeRequest &) const;
    bool reuseCheck(const KernelRecord &); // applies the check of an identical source; false when none
    void beginStretch(Gate::Stretch);
    void gateWhileIdle();
    void takeGpuBack();
    void applyOutcome(const GateRunner::Outcome &, bool background);
    void finalGate();
    GateRunner::Outcome finishGateRun(double estimate, bool &inTime);
    void updateReserve();
    std::string bestGate(bool final) const;
    RunBudget runBudget(bool final) const;
    void reportBudget(std::int64_t gating = 0, bool finalRun = false);
    void applyGate(const KernelRecord &, const SanitizeResult &, std::int64_t sameAs);
    void reviseIdea(std::int64_t ideaNode);
    RoundSummary roundSummary(bool final) const;
    nlohmann::json writeRoundSummary(const RoundSummary &);
    GenContext context(int round);
    std::int64_t recordExchange(const Exchange &, int round);
    void checkUsageBudget();
    std::string ideaTitleOf(std::int64_t candidateNode) const;

    void report(const SearchEvent &); // not "emit": that is a macro in every Qt program
    void requestStop(StopReason, std::string detail);
    bool stopping() const { return m_stop.load(); }
    void store(const Status &); // a failed write stops the search with the store's error
    template <typename T>
    void store(const Result<T> &r)
    {
        if (!r)
            store(Status(r.error()));
    }
    void watch(const std::atomic<bool> &cancel);
    Policy policy() const { return effectivePolicy(m_settings, m_problem); }

    Problem m_problem;
    std::shared_ptr<Generator> m_generator;
    SearchSettings m_settings;
    WorkerPool &m_pool;
    CompilePool &m_compiler;
    SessionStore &m_store;
    SearchEventCallback m_onEvent;

    SearchState m_state;
    std::map<std::int64_t, std::int64_t> m_ideaOf; // candidate -> idea node
    std::int64_t m_root = 0;
    LoadedProblem m_loaded;
    GpuInfo m_gpu;
    Ceilings m_ceilings;
    std::optional<Timing> m_eager;
    int m_roundsRun = 0;
    Tally m_tally;
    std::map<std::int64_t, Idea> m_roundIdeas; // idea node -> the generator's idea, this round's
    std::map<std::int64_t, Idea> m_runIdeas;   // and this run's, for repairs
    int m_round = 0;                           // the round running now
    struct LastRound {                         // the last round's node and what its summary needs
        std::int64_t node = 0;
        bool cut = false;
        Usage usage;
        double seconds = 0;
    };
    LastRound m_lastRound;
    Usage m_sessionUsage; // every exchange of the session, earlier runs included (the budgets count it)
    Gate m_gate;

    std::atomic<bool> m_stop{false};
    std::atomic<bool> m_watching{false};
    std::atomic<int> m_phase{Idle};
    std::atomic<std::int64_t> m_deadlineNs{0};   // steady clock; 0: no time budget
    std::atomic<std::int64_t> m_reserveNs{0};    // the end of the budget kept for the final gate
    const std::atomic<bool> *m_cancel = nullptr; // run()'s flag
    BudgetClock m_clock;
    RunBudget m_budget;
    double m_loadSeconds = 0;       // the problem's load into the workers, for the gate's first estimate
    std::vector<Pending> m_demoted; // kernels of this run's ideas the gate demoted since the last repairs
    std::mutex m_stopMutex;         // guards m_reason and m_detail, set from the watcher and the pools' threads
    StopReason m_reason = StopReason::Rounds;
    std::string m_detail;
    std::optional<Error> m_error; // the error run() returns
};

} // namespace kf
