// The round loop: setup, rounds, stops. Compiling, evaluating and repairing a batch of
// candidates is in search_batch.cpp.
#include "search/search.h"
#include "search/session_setup.h"

#include <algorithm>
#include <cstdio>
#include <future>
#include <set>
#include <thread>
#include <tuple>

namespace kf {

namespace {

using Clock = std::chrono::steady_clock;
// How often the watcher looks at the cancel flag and the clock: short enough that a cancel feels
// immediate, long enough to cost nothing.
constexpr auto kPoll = std::chrono::milliseconds(20);

std::int64_t nowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

std::string msText(double ms)
{
    char b[32];
    std::snprintf(b, sizeof b, "%.4f ms", ms);
    return b;
}

void add(Usage &total, const Usage &u) { total += u; }

std::string costText(double cost)
{
    char b[32];
    std::snprintf(b, sizeof b, "%.4f", cost);
    return b;
}

} // namespace

Search::Search(Problem problem, std::shared_ptr<Generator> generator, SearchSettings settings, WorkerPool &pool,
               CompilePool &compiler, SessionStore &store)
    : m_problem(std::move(problem)), m_generator(std::move(generator)), m_settings(settings), m_pool(pool),
      m_compiler(compiler), m_store(store), m_state(settings.topK, settings.bankSize)
{
}

Search::~Search() = default;

Result<std::unique_ptr<Search>> Search::resume(SessionStore &store, std::shared_ptr<Generator> generator,
                                               WorkerPool &pool, CompilePool &compiler,
                                               std::optional<SearchSettings> settings)
{
    if (store.readOnly())
        return makeError(ErrorCode::ReadOnly, "the session is open read-only, so a search cannot continue in it",
                         store.path());
    auto meta = store.sessionMeta();
    if (!meta)
        return meta.error();
    if (meta->problemText.empty())
        return makeError(ErrorCode::Session, "the session holds no problem to search", store.path());
    auto problem = parseProblem(meta->problemText, store.path() + " (problem_text)", meta->problemVariant);
    if (!problem)
        return problem.error();
    if (!settings) {
        auto stored = settingsFromJson(meta->settings);
        if (!stored) {
            Error e = stored.error();
            e.where = store.path() + " (settings)";
            return e;
        }
        settings = *stored;
    }
    return std::make_unique<Search>(std::move(*problem), std::move(generator), *settings, pool, compiler, store);
}

void Search::report(const SearchEvent &e)
{
    if (m_onEvent)
        m_onEvent(e);
}

void Search::requestStop(StopReason reason, std::string detail)
{
    std::lock_guard lock(m_stopMutex);
    if (m_stop)
        return; // the first reason is the one that counts
    m_reason = reason;
    m_detail = std::move(detail);
    m_stop = true;
}

void Search::store(const Status &s)
{
    if (s)
        return;
    {
        std::lock_guard lock(m_stopMutex);
        if (!m_error)
            m_error = s.error();
    }
    requestStop(StopReason::Error, "the session could not be written: " + s.error().text());
}

// Turns the cancel flag and the time budget into a stop, and keeps cancelling whatever pool is
// busy until it returns: a pool resets its own cancel flag when a batch starts, so one call could
// land just before that reset and be lost.
void Search::watch(const std::atomic<bool> &cancel)
{
    while (m_watching) {
        if (!m_stop) {
            const std::int64_t deadline = m_deadlineNs, reserve = m_reserveNs;
            if (cancel)
                requestStop(StopReason::Cancelled, "");
            else if (deadline != 0 && nowNs() >= deadline - reserve) {
                char b[128];
                std::snprintf(b, sizeof b, "%.0f s", m_settings.timeBudgetSeconds);
                std::string detail = b;
                if (reserve > 0 && nowNs() < deadline) {
                    std::snprintf(b, sizeof b,
                                  ", of which the last %.0f s are kept for compute-sanitizer to check the best",
                                  double(reserve) * 1e-9);
                    detail += b;
                }
                requestStop(StopReason::TimeBudget, detail);
            }
        }
        if (m_stop) {
            if (m_phase == Compiling)
                m_compiler.cancel();
            else if (m_phase == Evaluating || (m_phase == Gating && cancel))
                m_pool.cancel(); // the final gate had its time kept for it: only a cancel cuts it
        }
        std::this_thread::sleep_for(kPoll);
    }
}

Status Search::run(const std::atomic<bool> &cancel)
{
    m_stop = false;
    m_reason = StopReason::Rounds;
    m_detail.clear();
    m_error.reset();
    m_roundsRun = 0;
    m_reserveNs = 0;
    m_cancel = &cancel;
    m_demoted.clear();
    m_runIdeas.clear();
    m_lastRound = {};
    m_clock = BudgetClock{};
    // The budget counts from here: setup (workers, baseline, ceilings, the probe) is part of it.
    m_deadlineNs = m_settings.timeBudgetSeconds > 0 ? nowNs() + std::int64_t(m_settings.timeBudgetSeconds * 1e9) : 0;

    m_watching = true;
    std::thread watcher([this, &cancel] { watch(cancel); });
    Status prepared = prepare();
    m_clock.enter(BudgetClock::Idle);
    if (prepared) {
        const double setup = m_clock.split().setup;
        report(SearchStarted{m_problem.name, m_gpu.present ? m_gpu.name : "no GPU (compile only)", m_generator->name(),
                             m_state.lastRound + 1, m_eager ? m_eager->medianMs : 0, m_settings.timeBudgetSeconds,
                             setup});
        if (!m_gate.message.empty())
            report(SearchMessage{m_gate.message});
        store(m_store.appendEvent("search-started",
                                  {{"first_round", m_state.lastRound + 1},
                                   {"settings", m_settings},
                                   {"generator", m_generator->name()},
                                   {"sanitizer", gateJson()},
                                   {"setup_s", setup}}));
        int round = m_state.lastRound + 1;
        checkUsageBudget(); // a resumed session may have spent its budget already
        // A resumed session's best, if unchecked, has the end of the budget kept for it; the
        // kernels of earlier runs that the generator is shown are checked while the GPU waits.
        updateReserve();
        reportBudget();
        while (!stopping()) {
            if (round > m_settings.rounds) {
                requestStop(
                    StopReason::Rounds,
                    m_roundsRun == 0 ? "the session already has " + std::to_string(m_state.lastRound) + " rounds" : "");
                break;
            }
            runRound(round++);
        }
        finalGate();
        // The final gate may have demoted the last round's best: its summary says so, as every
        // round's does, after the gate.
        if (m_lastRound.node != 0 && m_gate.applied != m_gate.appliedAtRoundEnd)
            writeRoundSummary(roundSummary(true));
    } else if (stopping() && (m_reason == StopReason::Cancelled || m_reason == StopReason::TimeBudget)) {
        prepared = Ok{}; // stopped while the workers started: a stop, not a failure
    } else {
        requestStop(StopReason::Error, prepared.error().text());
        std::lock_guard lock(m_stopMutex);
        if (!m_error)
            m_error = prepared.error();
    }
    if (m_gate.runner && !m_gate.runner->idle())
        m_gate.runner->cancel(); // a setup cut short, say; nothing runs on after run() returns
    m_watching = false;
    watcher.join();

    const KernelRecord *best = m_state.best();
    const RunBudget budget = m_budget = runBudget(true);
    SearchFinished done{m_reason, m_detail, m_roundsRun, m_state.bestMs(), best ? best->node : 0, budget};
    // A session that could not be opened for writing cannot take the event either.
    if (!m_store.readOnly()) {
        (void)m_store.setMetaJson(session_meta::Budget, budget);
        (void)m_store.appendEvent("stopped",
                                  {{"reason", toString(done.reason)},
                                   {"detail", done.detail},
                                   {"rounds_run", done.roundsRun},
                                   {"best_ms", done.bestMs},
                                   {"best_node", done.bestNode},
                                   {"budget", budget}});
    }
    report(BudgetStatus{budget, 0, 0, false});
    report(done);
    if (m_error)
        return *m_error;
    return Ok{};
}

Status Search::prepare()
{
    if (!m_generator)
        return makeError(ErrorCode::Generator, "no generator was given to the search");
    if (Status v = m_settings.validate(); !v)
        return v;
    if (m_store.readOnly())
        return makeError(ErrorCode::ReadOnly, "the session is open read-only, so a search cannot write to it",
                         m_store.path());
    auto meta = m_store.sessionMeta();
    if (!meta)
        return meta.error();
    if (!meta->problemName.empty() && meta->problemName != m_problem.name)
        return makeError(ErrorCode::Session,
                         "the session is a search of " + meta->problemName + ", not of " + m_problem.name,
                         m_store.path());
    if (meta->problemText.empty()) { // a session made without its problem still gets one
        if (Status s = m_store.setMeta(session_meta::ProblemName, m_problem.name); !s)
            return s;
        if (Status s = m_store.setMeta(session_meta::ProblemText, sessionProblemText(m_problem)); !s)
            return s;
        if (Status s = m_store.setMeta(session_meta::ProblemVariant, m_problem.variant); !s)
            return s;
    }
    if (Status s = m_store.setMetaJson(session_meta::Settings, m_settings); !s)
        return s;
    if (nlohmann::json gs = m_generator->settings(); !gs.is_null())
        if (Status s = m_store.setMetaJson(session_meta::GeneratorSettings, gs); !s)
            return s;
    if (meta->generator.empty()) {
        if (Status s = m_store.setMeta(session_meta::Generator, m_generator->name()); !s)
            return s;
    } else if (meta->generator != m_generator->name()) {
        (void)m_store.appendLog(std::nullopt, "continued with the " + m_generator->name() + " generator");
    }
    if (Status s = restore(); !s)
        return s;
    if (Status s = startWorkers(); !s)
        return s;
    return m_generator->supports(context(m_state.lastRound + 1));
}

// Reads the session back and closes what a process that died left open, so that the tree never
// shows a round "running" or a candidate "queued" that nothing will ever finish.
Status Search::restore()
{
    auto nodes = m_store.allNodes();
    if (!nodes)
        return nodes.error();
    RestoredSearch r = restoreSearch(*nodes, m_settings.topK, m_settings.bankSize);
    m_state = std::move(r.state);
    m_ideaOf = std::move(r.ideaOf);
    const std::string why = "the search ended before this finished";
    for (auto id : r.unfinishedRounds)
        if (Status s = m_store.updateNode(id, node_status::Interrupted, why, std::nullopt); !s)
            return s;
    for (auto id : r.unfinishedCandidates)
        if (Status s = m_store.updateNode(id, node_status::Queued, std::string(node_status::Interrupted), std::nullopt);
            !s)
            return s;
    for (auto id : r.unfinishedIdeas) {
        auto n = m_store.node(id);
        if (!n)
            return n.error();
        if (Status s = m_store.updateNode(id, node_status::Interrupted, n->reason, n->resultJson); !s)
            return s;
    }
    m_sessionUsage = {};
    auto exchanges = m_store.allExchanges();
    if (!exchanges)
        return exchanges.error();
    for (const ExchangeRecord &e : *exchanges)
        m_sessionUsage += Usage{e.promptTokens, e.completionTokens, e.reasoningTokens, e.cost};
    if (r.root) {
        m_root = *r.root;
    } else {
        NodeRecord root;
        root.kind = NodeKind::Root;
        root.title = m_problem.name;
        root.text = m_problem.description;
        auto id = m_store.addNode(root);
        if (!id)
            return id.error();
        m_root = *id;
    }
    return Ok{};
}

Status Search::startWorkers()
{
    // The pool calls below can take minutes on a real problem (fp64 references, the baseline):
    // marking them as evaluation lets a cancel kill them.
    m_phase = Evaluating;
    struct PhaseReset {
        std::atomic<int> &phase;
        ~PhaseReset() { phase = Search::Idle; }
    } reset{m_phase};

    // The sanitizer's probe starts workers of its own, so it runs while the pool's start and the
    // problem's load do; the baseline waits for it on the GPU lock. It is stopped on any way out.
    std::future<SanitizerProbe> probe;
    if (!m_settings.compileOnly && m_settings.sanitize)
        probe = std::async(std::launch::async, [this] { return m_pool.probeSanitizer(); });
    struct ProbeGuard {
        std::future<SanitizerProbe> &probe;
        WorkerPool &pool;
        ~ProbeGuard()
        {
            if (probe.valid())
                pool.cancel();
        }
    } probeGuard{probe, m_pool};

    if (Status s = m_pool.start(); !s)
        return s;
    std::string why = "no worker reported a GPU";
    bool present = false;
    for (std::size_t i = 0; i < m_pool.size() && !present; ++i) {
        const auto &info = m_pool.worker(i).info();
        if (info && info->gpu.present) {
            m_gpu = info->gpu;
            present = true;
        } else if (info) {
            why = info->gpu.reason;
        }
    }
    if (!present && !m_settings.compileOnly)
        return makeError(ErrorCode::NoGpu,
                         "the search needs an NVIDIA GPU: " + why +
                             " (a compile-only search runs the rounds up to compilation without one)");
    if (!present) {
        m_gpu = GpuInfo{};
        m_gpu.reason = why;
        report(SearchMessage{"no GPU (" + why + "): candidates are compiled, then recorded as needing a GPU"});
    } else if (auto meta = m_store.meta(session_meta::Gpu); !meta || meta->empty()) {
        if (Status s = m_store.setMeta(session_meta::Gpu, m_gpu.name); !s)
            return s;
    }

    const auto loading = Clock::now();
    if (Status s = m_pool.load(m_problem); !s)
        return s;
    m_loadSeconds = std::chrono::duration<double>(Clock::now() - loading).count();
    for (std::size_t i = 0; i < m_pool.size(); ++i)
        if (const auto &l = m_pool.worker(i).loaded()) {
            m_loaded = *l;
            break;
        }

    // Nothing is timed in a compile-only search, so neither the baseline nor the ceilings are
    // worth the minutes they take (and without a GPU they cannot be measured).
    if (m_settings.compileOnly) {
        setupGate({});
        return Ok{};
    }

    // A resumed session keeps its baseline, so every round of it is measured against one time.
    std::optional<nlohmann::json> stored;
    if (auto b = m_store.metaJson(session_meta::Baseline))
        stored = *b;
    if (double ms = baselineMedianMs(stored); ms > 0) {
        try {
            m_eager = (*stored)["timing"].get<Timing>();
        } catch (const nlohmann::json::exception &) {
            m_eager = Timing{};
            m_eager->medianMs = ms;
        }
        for (std::size_t i = 0; i < m_pool.size(); ++i)
            m_pool.worker(i).setBaselineMs(ms);
    } else if (auto b = m_pool.baseline(m_settings.timingTrials)) {
        m_eager = b->timing;
        if (Status s = m_store.setBaseline({{"timing", b->timing}, {"flags", b->flags}}); !s)
            return s;
    } else {
        if (stopping())
            return b.error();
        report(SearchMessage{"the eager baseline failed (" + b.error().text() + "); speedups are unknown"});
    }

    if (auto c = m_pool.ceilings()) {
        m_ceilings = *c;
        if (Status s = m_store.setMetaJson("ceilings", *c); !s)
            return s;
    } else {
        if (stopping())
            return c.error();
        report(SearchMessage{"the GPU's ceilings are unknown (" + c.error().text() + ")"});
    }
    setupGate(probe.valid() ? probe.get() : SanitizerProbe{});
    if (stopping())
        return makeError(ErrorCode::Cancelled, "cancelled while probing compute-sanitizer");
    return Ok{};
}

GenContext Search::context(int round)
{
    GenContext c;
    c.problem = m_problem;
    c.loaded = m_loaded;
    c.gpu = m_gpu;
    c.ceilings = m_ceilings;
    c.eager = m_eager;
    c.policy = policy();
    c.round = round;
    c.topK = m_state.topK();
    c.bank = m_state.bank();
    c.tried = m_state.ideas();
    if (const std::int64_t deadline = m_deadlineNs; deadline != 0)
        c.secondsLeft = std::max(0.0, double(deadline - nowNs()) / 1e9);
    c.cancel = &m_stop;
    c.record = [this, round](const Exchange &e) { return recordExchange(e, round); };
    return c;
}

// Generators call this on the search's thread as each exchange ends, so it is stored even when
// the search stops before the call returns, and a budget can stop requests still in flight.
std::int64_t Search::recordExchange(const Exchange &e, int round)
{
    ExchangeRecord r;
    r.round = round;
    r.purpose = e.purpose;
    r.generator = m_generator->name();
    r.model = e.model;
    r.endpoint = e.endpoint;
    r.request = e.request;
    r.prompt = e.prompt;
    r.response = e.response;
    r.answer = e.answer;
    r.reasoning = e.reasoning;
    r.error = e.error;
    r.stopReason = e.stopReason;
    r.ending = e.ending;
    r.httpStatus = e.httpStatus;
    r.attempts = e.attempts;
    r.promptTokens = e.usage.promptTokens;
    r.completionTokens = e.usage.completionTokens;
    r.reasoningTokens = e.usage.reasoningTokens;
    r.cost = e.usage.cost;
    r.latencyMs = e.latencyMs;
    std::vector<std::int64_t> nodes;
    if (e.node > 0)
        nodes.push_back(e.node);
    auto id = m_store.addExchange(r, nodes);
    if (!id) {
        store(id.error());
        return 0;
    }
    // A request cut off by a stop is kept, but the stop itself is what the log reports.
    if (!e.error.empty() && e.error != "cancelled") {
        const std::string line = e.purpose + " request failed: " + e.error;
        (void)m_store.appendLog(e.node > 0 ? std::optional<std::int64_t>(e.node) : std::nullopt, line);
        report(SearchMessage{(e.node > 0 ? "#" + std::to_string(e.node) + " " : std::string()) + line});
    }
    m_sessionUsage += e.usage;
    checkUsageBudget();
    return *id;
}

void Search::checkUsageBudget()
{
    const std::int64_t tokens = m_sessionUsage.tokens();
    if (m_settings.tokenBudget > 0 && tokens >= m_settings.tokenBudget)
        requestStop(StopReason::TokenBudget,
                    std::to_string(tokens) + " tokens used, budget " + std::to_string(m_settings.tokenBudget));
    else if (m_settings.costBudget > 0 && m_sessionUsage.cost >= m_settings.costBudget)
        requestStop(StopReason::CostBudget,
                    "cost " + costText(m_sessionUsage.cost) + ", budget " + costText(m_settings.costBudget));
}

std::string Search::ideaTitleOf(std::int64_t candidateNode) const
{
    if (auto it = m_ideaOf.find(candidateNode); it != m_ideaOf.end())
        if (const IdeaRecord *idea = m_state.idea(it->second))
            return idea->title;
    auto n = m_store.node(candidateNode); // a hand-written kernel stands for itself
    return n ? n->title : std::string();
}

std::vector<Idea> Search::proposeIdeas(int round, Usage &usage)
{
    Usage used;
    auto proposed = m_generator->proposeIdeas(context(round), m_settings.ideasPerRound, &used);
    add(usage, used);
    if (stopping())
        return {};
    if (!proposed) {
        {
            std::lock_guard lock(m_stopMutex);
            if (!m_error)
                m_error = proposed.error();
        }
        requestStop(StopReason::Error, "the generator failed to propose ideas: " + proposed.error().text());
        return {};
    }
    // The search, not only the generator, guarantees that no idea repeats on the same parent.
    std::vector<Idea> out;
    std::set<std::pair<std::string, std::int64_t>> seen;
    int repeats = 0;
    for (Idea &idea : *proposed) {
        if (int(out.size()) >= m_settings.ideasPerRound)
            break;
        if (idea.id.empty())
            idea.id = idea.title;
        if (m_state.tried(idea.id, idea.parentNode) || !seen.insert({idea.id, idea.parentNode}).second) {
            ++repeats;
            continue;
        }
        out.push_back(std::move(idea));
    }
    if (out.empty())
        requestStop(StopReason::NoMoreIdeas,
                    repeats ? "the generator proposed only ideas already tried on their parents" : "");
    else if (repeats)
        report(SearchMessage{"skipped " + std::to_string(repeats) + " idea(s) already tried on the same parent"});
    return out;
}

void Search::runRound(int round)
{
    const auto started = Clock::now();
    Usage usage;
    m_tally = {};
    m_lastRound = {}; // the tally the last round's summary came from is gone
    m_roundIdeas.clear();
    m_round = round;
    beginStretch(Gate::RoundStretch);
    // Ideas first: a round node appears only when there is something to try in it.
    std::vector<Idea> ideas = proposeIdeas(round, usage);
    if (ideas.empty() || stopping())
        return;
    gateWhileIdle();

    NodeRecord rn;
    rn.parent = m_root;
    rn.kind = NodeKind::Round;
    rn.round = round;
    rn.title = "Round " + std::to_string(round);
    rn.status = node_status::Running;
    auto roundNode = m_store.addNode(rn);
    if (!roundNode) {
        store(roundNode.error());
        return;
    }
    // The answer that proposed the ideas belongs to the round as well as to each idea.
    std::set<std::int64_t> proposals;
    for (const Idea &idea : ideas)
        if (idea.exchange > 0 && proposals.insert(idea.exchange).second)
            store(m_store.linkExchange(idea.exchange, *roundNode));
    ++m_roundsRun;
    const double bestBefore = m_state.bestMs();
    store(m_store.appendEvent("round-started", {{"round", round}, {"node", *roundNode}, {"best_ms", bestBefore}}));
    report(RoundStarted{round, *roundNode, bestBefore});

    std::vector<std::pair<Idea, std::int64_t>> placed;
    const std::string generator = m_generator->name();
    for (Idea &idea : ideas) {
        NodeRecord in;
        in.parent = *roundNode;
        in.kind = NodeKind::Idea;
        in.round = round;
        in.title = idea.title.empty() ? idea.id : idea.title;
        in.text = idea.text;
        in.status = node_status::Queued;
        in.reason = idea.why;
        in.resultJson = ideaInfoJson(idea, generator).dump();
        auto id = m_store.addNode(in);
        if (!id) {
            store(id.error());
            break;
        }
        idea.node = *id;
        if (idea.exchange > 0)
            store(m_store.linkExchange(idea.exchange, *id));
        m_state.addIdea(IdeaRecord{*id, round, idea.id, in.title, idea.text, idea.parentNode, 0, 0, 0, 0, {}, {}});
        m_roundIdeas[*id] = idea;
        m_runIdeas[*id] = idea;
        report(IdeaProposed{round, *id, idea.id, in.title, idea.text, idea.why, idea.parentNode});
        placed.emplace_back(std::move(idea), *id);
    }

    processBatch(draftCandidates(round, placed, usage), usage);
    finishIdeas(placed);

    const bool cut = stopping();
    m_lastRound = LastRound{*roundNode, cut, usage, std::chrono::duration<double>(Clock::now() - started).count()};
    m_gate.appliedAtRoundEnd = m_gate.applied;
    const RoundSummary s = roundSummary(false);
    nlohmann::json summary = writeRoundSummary(s);
    summary["round"] = round;
    summary["node"] = *roundNode;
    if (!m_store.readOnly())
        (void)m_store.appendEvent("round-finished", summary);
    report(RoundFinished{round, *roundNode, s.bestMs, s.bestNode, s.bestIdea, s.roundBestMs, s.candidates, s.correct,
                         usage.tokens(), usage.cost, s.sanitized, s.sanitizerFindings, s.sanitizerSeconds, s.bestGate});
    reportBudget();
}

// The summary a round node keeps: the round's candidates after the gate, and the session's best.
RoundSummary Search::roundSummary(bool final) const
{
    RoundSummary s;
    if (const KernelRecord *best = m_state.best()) {
        s.bestMs = m_state.bestMs();
        s.bestNode = best->node;
        s.bestIdea = ideaTitleOf(best->node);
    }
    std::tie(s.roundBestMs, s.roundBestNode) = m_tally.best();
    s.candidates = m_tally.candidates;
    s.correct = m_tally.correct;
    s.sanitized = m_tally.sanitized;
    s.sanitizerFindings = m_tally.findings;
    s.sanitizerSeconds = m_tally.sanitizerSeconds;
    s.bestGate = bestGate(final);
    s.seconds = m_lastRound.seconds;
    s.usage = m_lastRound.usage;
    return s;
}

nlohmann::json Search::writeRoundSummary(const RoundSummary &s)
{
    const bool cut = m_lastRound.cut;
    std::string reason = cut ? toString(m_reason) : s.bestMs > 0 ? "best " + msText(s.bestMs) : "no correct kernel yet";
    nlohmann::json summary = roundSummaryJson(s);
    store(m_store.updateNode(m_lastRound.node, cut ? node_status::Stopped : node_status::Finished, reason,
                             summary.dump()));
    return summary;
}

std::int64_t Search::addCandidate(Pending &p, std::int64_t parent)
{
    NodeRecord cn;
    cn.parent = parent;
    cn.kind = NodeKind::Candidate;
    cn.round = p.round;
    cn.title = p.title;
    cn.text = p.source;
    cn.status = node_status::Queued;
    auto id = m_store.addNode(cn);
    if (!id) {
        store(id.error());
        return 0;
    }
    p.node = *id;
    m_ideaOf[p.node] = p.ideaNode;
    return p.node;
}

std::vector<Search::Pending> Search::draftCandidates(int round, const std::vector<std::pair<Idea, std::int64_t>> &ideas,
                                                     Usage &usage)
{
    std::vector<Pending> out;
    if (ideas.empty() || stopping())
        return out;
    const GenContext ctx = context(round);
    std::vector<Idea> asked;
    for (const auto &[idea, ideaNode] : ideas) {
        asked.push_back(idea);
        asked.back().node = ideaNode;
    }
    Usage used;
    auto results = m_generator->implementAll(ctx, asked, m_settings.implsPerIdea, &used);
    add(usage, used);
    gateWhileIdle();
    for (std::size_t i = 0; i < ideas.size() && i < results.size(); ++i) {
        const auto &[idea, ideaNode] = ideas[i];
        const auto &drafts = results[i];
        if (!drafts) {
            if (drafts.error().code == ErrorCode::Cancelled)
                continue;
            (void)m_store.appendLog(ideaNode, "the generator could not implement this idea: " + drafts.error().text());
            report(SearchMessage{"idea #" + std::to_string(ideaNode) +
                                 " has no implementation: " + drafts.error().text()});
            continue;
        }
        int k = 0;
        // Drafts that arrived are written even when the search is stopping (they stay queued with
        // the stop as their reason): their answers were paid for and are linked to them.
        for (const Draft &d : *drafts) {
            if (k++ >= m_settings.implsPerIdea)
                break;
            Pending p;
            p.ideaNode = ideaNode;
            p.round = round;
            p.title = d.title.empty() ? idea.title + " #" + std::to_string(k) : d.title;
            p.source = d.source;
            p.draft.params = d.params;
            if (!addCandidate(p, ideaNode))
                break;
            if (d.exchange > 0)
                store(m_store.linkExchange(d.exchange, p.node));
            report(CandidateQueued{round, p.node, ideaNode, 0, p.title});
            out.push_back(std::move(p));
        }
    }
    return out;
}

void Search::finishIdeas(const std::vector<std::pair<Idea, std::int64_t>> &ideas)
{
    const std::string generator = m_generator->name();
    for (const auto &[idea, node] : ideas) {
        const IdeaRecord *r = m_state.idea(node);
        if (!r)
            continue;
        std::string_view status = r->correct > 0 ? std::string_view("correct")
            : r->unjudged > 0                    ? node_status::NeedsGpu
            : r->failed > 0                      ? node_status::Failed
            : stopping()                         ? node_status::Stopped
                                                 : node_status::Failed; // no implementation at all
        nlohmann::json info = ideaInfoJson(idea, generator);
        info["best_ms"] = r->bestMs;
        info["correct"] = r->correct;
        info["failed"] = r->failed;
        info["unjudged"] = r->unjudged;
        info["failure"] = r->failure;
        store(m_store.updateNode(node, status, idea.why, info.dump()));
    }
}

} // namespace kf
