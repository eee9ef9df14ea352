// The sanitizer gate (docs/search.md, "The sanitizer gate"): what the search reports as its best
// has run once under compute-sanitizer, or is reported unchecked with the reason. A run costs
// seconds a kernel (a worker started under the tool loads the problem again), so runs happen where
// they cost the search nothing — on a thread of their own while the GPU waits on the generator or
// the compiler, best first, then the rest of the top-k — and, for a best still unchecked, in a part
// at the end of the time budget kept for it. A finding demotes the kernel; the next best is
// checked in turn.
#include "search/search.h"

#include "kernel/candidate.h"
#include "util/hash.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>

namespace kf {

namespace {

std::int64_t nowNs()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

std::vector<std::string> toolNames(const SanitizeRequest &r)
{
    std::vector<std::string> out;
    for (SanitizerTool t : r.tools)
        out.push_back(toString(t));
    return out;
}

std::string joined(const std::vector<std::string> &items)
{
    std::string out;
    for (const auto &i : items)
        out += (out.empty() ? "" : ", ") + i;
    return out;
}

} // namespace

std::pair<double, std::int64_t> Search::Tally::best() const
{
    std::pair<double, std::int64_t> out{0, 0};
    for (const auto &t : times) // in arrival order: of two equal times the earlier stays best
        if (out.second == 0 || t.first < out.first)
            out = t;
    return out;
}

void Search::setupGate(SanitizerProbe probe)
{
    m_gate = Gate{};
    if (m_settings.compileOnly)
        return; // nothing runs, so there is nothing to check
    if (!m_settings.sanitize) {
        m_gate.why = "sanitize = false in the settings (--no-sanitize)";
    } else {
        m_gate.probe = std::move(probe);
        if (m_gate.probe.cancelled)
            return;
        m_gate.on = m_gate.probe.memcheck;
        m_gate.racecheck = m_gate.probe.racecheck;
        if (!m_gate.on)
            m_gate.why = m_gate.probe.reason;
    }
    std::string text;
    if (m_gate.on) {
        const SanitizerProbe &p = m_gate.probe;
        text = "sanitizer gate on: compute-sanitizer" + (p.version.empty() ? "" : " " + p.version) + " runs memcheck" +
            (m_gate.racecheck ? " (and racecheck on kernels with shared memory)" : "") +
            " on the kernel the search reports as its best, and on the top-k while the GPU waits on the "
            "generator or the compiler; probe " +
            secondsText(p.seconds);
        if (!m_gate.racecheck)
            text += "; " + p.reason;
        m_gate.runner = std::make_unique<GateRunner>(m_pool);
        // Until a kernel of this problem has run under the tool: a run costs what the probe's did
        // per tool, plus loading this problem, which the tool's worker does again.
        m_gate.perToolFallback = p.seconds / (m_gate.racecheck ? 2 : 1) + m_loadSeconds;
    } else {
        text = "sanitizer gate off: " + m_gate.why + "; the search's best is reported unchecked";
    }
    m_gate.message = text; // reported after SearchStarted, where a reader looks for it
    if (!m_gate.on || !m_gate.racecheck)
        (void)m_store.appendLog(std::nullopt, text);
}

nlohmann::json Search::gateJson() const
{
    if (m_settings.compileOnly)
        return {{"on", false}, {"reason", "a compile-only search runs no kernels"}};
    const SanitizerProbe &p = m_gate.probe;
    return {{"on", m_gate.on},
            {"memcheck", m_gate.on},
            {"racecheck", m_gate.on && m_gate.racecheck},
            {"reason", m_gate.on ? (m_gate.racecheck ? std::string() : p.reason) : m_gate.why},
            {"command", p.command},
            {"version", p.version},
            {"probe_seconds", p.seconds}};
}

// The kernels that have not been through the gate, in the order they are worth it: the best
// (what the search reports), then the rest of the top-k and the bank (what the generator builds on).
std::vector<KernelRecord> Search::awaitingGate() const
{
    std::vector<KernelRecord> out;
    std::set<std::int64_t> seen;
    auto consider = [&](const KernelRecord &k) {
        if (!k.result.sanitizer && seen.insert(k.node).second)
            out.push_back(k);
    };
    for (const KernelRecord &k : m_state.topK())
        consider(k);
    for (const KernelRecord &k : m_state.bank())
        consider(k);
    return out;
}

SanitizeRequest Search::sanitizeRequest(const KernelRecord &k) const
{
    SanitizeRequest r;
    r.key = "s" + std::to_string(k.node);
    r.source = k.source;
    r.policy = policy();
    r.tools = {SanitizerTool::Memcheck};
    // Racecheck only looks at shared memory: static (the resources ptxas reported) or dynamic (the
    // launch lines). Without resources it cannot be told, so it runs.
    bool shared = k.result.resources.empty();
    for (const auto &[name, res] : k.result.resources)
        shared = shared || res.sharedBytes > 0;
    if (auto c = parseCandidate(k.source)) {
        for (const auto &l : c->launches)
            if (std::find(r.kernels.begin(), r.kernels.end(), l.kernel) == r.kernels.end())
                r.kernels.push_back(l.kernel);
        if (auto plan = resolveCandidate(*c, m_problem))
            for (const auto &l : plan->launches)
                shared = shared || l.smem > 0;
    }
    if (shared && m_gate.racecheck)
        r.tools.push_back(SanitizerTool::Racecheck);
    return r;
}

double Search::gateEstimate(const SanitizeRequest &r) const
{
    const double perTool = m_gate.perTool > 0 ? m_gate.perTool : m_gate.perToolFallback;
    return perTool * double(std::max<std::size_t>(1, r.tools.size()));
}

bool Search::reuseCheck(const KernelRecord &k)
{
    // The same source (a repair that changed nothing, a template drawn twice) was judged already.
    auto hit = m_gate.bySource.find(contentHash(k.source));
    if (hit == m_gate.bySource.end())
        return false;
    applyGate(k, hit->second.second, hit->second.first);
    return true;
}

// A stretch in which the GPU waits on the generator or the compiler begins: a round's, up to its
// first evaluation, or a repair batch's. What the last one of its kind lasted says whether a run
// under the tool would end before the GPU is needed again.
void Search::beginStretch(Gate::Stretch kind)
{
    m_gate.stretch = kind;
    m_gate.stretchSinceNs = nowNs();
    gateWhileIdle();
}

void Search::gateWhileIdle()
{
    if (!m_gate.on || !m_gate.runner || stopping())
        return;
    if (auto outcome = m_gate.runner->collect())
        applyOutcome(*outcome, true);
    if (!m_gate.runner->idle() || m_gate.stretchSinceNs == 0)
        return;
    const std::int64_t now = nowNs();
    const std::int64_t stretchEnd = m_gate.stretchSinceNs + std::int64_t(m_gate.lastStretch[m_gate.stretch] * 1e9);
    for (const KernelRecord &k : awaitingGate()) {
        if (reuseCheck(k))
            continue;
        SanitizeRequest request = sanitizeRequest(k);
        const double estimate = gateEstimate(request);
        // Only a run expected to end while the GPU still waits, and within the budget: one cut off
        // when the GPU is taken back has cost the compiler its CPU for nothing.
        const std::int64_t end = now + std::int64_t(estimate * 1e9);
        const std::int64_t searchEnd = m_deadlineNs - (k.node == m_gate.reservedFor ? 0 : m_reserveNs.load());
        if (end > stretchEnd || (m_deadlineNs != 0 && end > searchEnd))
            return;
        report(CandidateSanitizing{k.node, toolNames(request), true, estimate});
        m_gate.runner->start(k.node, std::move(request));
        reportBudget(k.node, false);
        return;
    }
}

// Before an evaluation: the GPU is needed for timing, so a run still going is stopped (its kernel
// waits for the next chance) and the stretch's length is noted.
void Search::takeGpuBack()
{
    if (m_gate.stretchSinceNs != 0)
        m_gate.lastStretch[m_gate.stretch] = double(nowNs() - m_gate.stretchSinceNs) * 1e-9;
    m_gate.stretchSinceNs = 0;
    if (!m_gate.runner || m_gate.runner->idle())
        return;
    if (auto outcome = m_gate.runner->collect()) {
        applyOutcome(*outcome, true);
        return;
    }
    m_clock.enter(BudgetClock::Gate);
    const GateRunner::Outcome outcome = m_gate.runner->cancel();
    m_clock.enter(BudgetClock::Idle);
    applyOutcome(outcome, true);
}

void Search::applyOutcome(const GateRunner::Outcome &o, bool background)
{
    if (background)
        m_gate.backgroundSeconds += o.seconds;
    if (o.result.cancelled) {
        report(CandidateSanitized{o.node, {}, Verdict::Correct, true});
        return;
    }
    const SanitizerCheck &check = o.result.check;
    if (!check.tools.empty() && check.outcome != "unchecked")
        m_gate.perTool = std::max(m_gate.perTool, check.seconds / double(check.tools.size()));
    m_gate.bySource.try_emplace(contentHash(o.request.source), o.node, o.result);
    if (const KernelRecord *k = m_state.find(o.node)) {
        const KernelRecord kernel = *k; // applyGate may remove it from the state
        applyGate(kernel, o.result, 0);
    }
    updateReserve();
}

// After the last round: what the search reports as its best runs under the tool, unless it did
// already; a finding demotes it and the next best is checked in turn, while the budget allows.
void Search::finalGate()
{
    if (!m_gate.on || !m_gate.runner)
        return;
    auto cancelled = [this] { return m_cancel && m_cancel->load(); };
    m_phase = Gating;
    bool inTime = true;
    if (!m_gate.runner->idle()) {
        const KernelRecord *best = m_state.best();
        const bool useful = !cancelled() && best && m_gate.runner->node() == best->node;
        m_clock.enter(BudgetClock::Gate);
        const GateRunner::Outcome outcome =
            useful ? finishGateRun(gateEstimate(sanitizeRequest(*best)), inTime) : m_gate.runner->cancel();
        m_clock.enter(BudgetClock::Idle);
        applyOutcome(outcome, true);
    }
    while (inTime && !cancelled()) {
        const KernelRecord *current = m_state.best();
        if (!current || current->result.sanitizer)
            break;
        const KernelRecord best = *current;
        if (reuseCheck(best))
            continue;
        SanitizeRequest request = sanitizeRequest(best);
        const double estimate = gateEstimate(request);
        // The reserve was kept for this kernel; any other starts only when it can end in the budget.
        if (m_deadlineNs != 0 && best.node != m_gate.reservedFor &&
            nowNs() + std::int64_t(estimate * 1e9) > m_deadlineNs) {
            m_gate.bestNote = "the time budget left no room for compute-sanitizer, which takes about " +
                secondsText(estimate) + " a kernel here";
            break;
        }
        m_gate.reservedFor = 0;
        report(CandidateSanitizing{best.node, toolNames(request), false, estimate});
        reportBudget(best.node, true);
        m_clock.enter(BudgetClock::Gate);
        m_gate.runner->start(best.node, std::move(request));
        const GateRunner::Outcome outcome = finishGateRun(estimate, inTime);
        m_clock.enter(BudgetClock::Idle);
        applyOutcome(outcome, false);
        if (outcome.result.cancelled)
            break;
    }
    if (cancelled())
        if (const KernelRecord *best = m_state.best(); best && !best->result.sanitizer)
            m_gate.bestNote = "the search was cancelled before compute-sanitizer ran it";
    m_phase = Idle;
}

// Waits for the gate's run in flight; under a time budget, no longer than the budget's end plus
// the run's estimate (the evaluation in flight; the tool's time grows with the problem, far beyond
// the probe's on a large one): a run still going then is stopped, and the best is reported
// unchecked with how long the tool had run.
GateRunner::Outcome Search::finishGateRun(double estimate, bool &inTime)
{
    if (m_deadlineNs == 0)
        return m_gate.runner->wait();
    if (auto done = m_gate.runner->waitUntil(m_deadlineNs + std::int64_t(estimate * 1e9)))
        return *done;
    GateRunner::Outcome o = m_gate.runner->cancel();
    if (o.result.cancelled) {
        inTime = false;
        const double tools = double(std::max<std::size_t>(1, o.request.tools.size()));
        m_gate.perTool = std::max(m_gate.perTool, o.seconds / tools);
        m_gate.bestNote = "compute-sanitizer had not finished when the time budget ran out (" + secondsText(o.seconds) +
            " under the tool, stopped)";
    }
    return o;
}

// The end of the time budget is kept for the final gate while the best is unchecked, when it fits:
// a best found too late for the tool leaves the search to use the rest, and is reported unchecked.
void Search::updateReserve()
{
    const KernelRecord *best = m_state.best();
    std::int64_t reserve = 0;
    if (m_gate.on && m_deadlineNs != 0 && best && !best->result.sanitizer &&
        !m_gate.bySource.count(contentHash(best->source))) {
        const std::int64_t estimate = std::int64_t(gateEstimate(sanitizeRequest(*best)) * 1e9);
        if (nowNs() + estimate <= m_deadlineNs)
            reserve = estimate;
    }
    m_gate.reservedFor = reserve > 0 ? best->node : 0;
    m_reserveNs = reserve;
}

std::string Search::bestGate(bool final) const
{
    const KernelRecord *best = m_state.best();
    if (!best)
        return {};
    if (!m_gate.on)
        return "off";
    if (best->result.sanitizer)
        return best->result.sanitizer->outcome == "clean" ? "clean" : "unchecked";
    return final ? "unchecked" : "pending";
}

RunBudget Search::runBudget(bool final) const
{
    RunBudget b;
    b.budgetSeconds = m_settings.timeBudgetSeconds;
    b.elapsedSeconds = m_clock.elapsed();
    b.split = m_clock.split();
    b.gateBackgroundSeconds = m_gate.backgroundSeconds;
    b.gateRuns = m_gate.runs;
    b.gateFindings = m_gate.findings;
    const KernelRecord *best = m_state.best();
    if (!best)
        return b;
    b.bestNode = best->node;
    b.bestGate = bestGate(final);
    if (b.bestGate == "off")
        b.bestGateNote = m_settings.compileOnly ? "a compile-only search runs no kernels" : m_gate.why;
    else if (best->result.sanitizer)
        b.bestGateNote = best->result.sanitizer->note;
    else if (final)
        b.bestGateNote = m_gate.bestNote.empty() ? "compute-sanitizer did not get to run it" : m_gate.bestNote;
    if (b.bestGate != "clean")
        if (const KernelRecord *clean = m_state.fastestClean()) {
            b.bestCheckedNode = clean->node;
            b.bestCheckedMs = clean->result.timing ? clean->result.timing->medianMs : 0;
        }
    return b;
}

void Search::reportBudget(std::int64_t gating, bool finalRun)
{
    report(BudgetStatus{runBudget(false), double(m_reserveNs.load()) * 1e-9, gating, finalRun});
}

void Search::applyGate(const KernelRecord &k, const SanitizeResult &r, std::int64_t sameAs)
{
    ++m_gate.applied;
    SanitizerCheck check = r.check;
    if (sameAs != 0) {
        check.sameAs = sameAs;
        check.seconds = 0;
    } else {
        ++m_tally.sanitized;
        m_tally.sanitizerSeconds += check.seconds;
        ++m_gate.runs;
    }
    // The stored result, so that what the search keeps beside it (the draft) stays.
    auto node = m_store.node(k.node);
    std::optional<CandidateReading> reading = node ? readCandidate(*node) : std::nullopt;
    EvalResult result = reading ? reading->result : k.result;
    result.sanitizer = check;
    const bool finding = check.outcome == "finding";
    std::string log;
    if (finding) {
        result.verdict = r.finding == SanitizerTool::Racecheck && !r.toolFailed ? Verdict::Racy : Verdict::Sanitizer;
        result.reason = "passed verification, but compute-sanitizer " + check.note +
            (sameAs ? " (as #" + std::to_string(sameAs) + ", which has the same source)" : "");
        result.sanitizerReport = r.report;
        log = "compute-sanitizer " + check.note + "\n" + r.report;
    } else if (check.outcome == "unchecked") {
        result.sanitizerReport = r.report;
        log = "compute-sanitizer could not check it, so it stays: " + check.note;
    } else {
        log = "compute-sanitizer " + joined(check.tools) + ": clean" +
            (sameAs ? " (same source as #" + std::to_string(sameAs) + ")" : " in " + secondsText(check.seconds));
    }
    store(m_store.updateNode(k.node, toString(result.verdict), result.reason,
                             candidateResultJson(result, reading ? reading->draft : DraftInfo{})));
    (void)m_store.appendLog(k.node, log);
    if (finding) {
        const auto idea = m_ideaOf.find(k.node);
        const std::int64_t ideaNode = idea == m_ideaOf.end() ? 0 : idea->second;
        m_state.demote(k.node, ideaNode, result);
        const auto before = m_tally.times.size();
        std::erase_if(m_tally.times, [&](const auto &t) { return t.second == k.node; });
        if (m_tally.times.size() < before)
            --m_tally.correct;
        ++m_tally.findings;
        ++m_gate.findings;
        // An idea of an earlier round, or any after the last round: its node is written already.
        if (ideaNode != 0 && (!m_roundIdeas.count(ideaNode) || m_phase == Gating))
            reviseIdea(ideaNode);
        // While rounds run, an idea of this run has its kernel repaired with the next batch's
        // failures (the repair belongs to the round that makes it); after the last, none is.
        if (ideaNode != 0 && m_runIdeas.count(ideaNode) && node && m_phase != Gating) {
            Pending p;
            p.node = k.node;
            p.ideaNode = ideaNode;
            p.round = m_round;
            p.title = node->title;
            p.source = k.source;
            p.draft = reading ? reading->draft : DraftInfo{};
            p.result = result;
            m_demoted.push_back(std::move(p));
        }
    } else {
        m_state.setSanitizer(k.node, check);
    }
    report(CandidateSanitized{k.node, check, result.verdict});
}

// An idea of an earlier round whose correct kernel the gate demoted: its node says so now.
void Search::reviseIdea(std::int64_t ideaNode)
{
    const IdeaRecord *r = m_state.idea(ideaNode);
    auto n = m_store.node(ideaNode);
    if (!r || !n)
        return;
    nlohmann::json info = n->resultJson ? nlohmann::json::parse(*n->resultJson, nullptr, false) : nlohmann::json();
    if (!info.is_object())
        info = nlohmann::json::object();
    info["best_ms"] = r->bestMs;
    info["correct"] = r->correct;
    info["failed"] = r->failed;
    info["failure"] = r->failure;
    const std::string_view status = r->correct > 0 ? std::string_view("correct") : node_status::Failed;
    store(m_store.updateNode(ideaNode, status, n->reason, info.dump()));
}

} // namespace kf
