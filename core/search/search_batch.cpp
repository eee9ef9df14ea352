// One batch of candidates through compile, evaluation and repair. Results are stored as each one
// arrives (the pools call back from their threads, one at a time, while run() waits), so a cancel
// or a crash of this process loses nothing already judged.
#include "search/search.h"

#include "kernel/candidate.h"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <set>

namespace kf {

namespace {

using Clock = std::chrono::steady_clock;

// Failures worth showing the generator: it may fix code that does not compile, computes the
// wrong thing, races or faults. A suspect time (faster than physics) is a measurement question,
// not a code fix, and a cancelled candidate never ran.
bool repairable(Verdict v)
{
    switch (v) {
    case Verdict::CompileError:
    case Verdict::LaunchError:
    case Verdict::Wrong:
    case Verdict::Racy:
    case Verdict::Sanitizer:
    case Verdict::Crashed:
    case Verdict::Inconsistent: // a timed run failed its check: often a race that verification missed
    case Verdict::TimedOut:
        return true;
    default:
        return false;
    }
}

std::string firstError(const CompileOutput &out)
{
    for (const auto &d : out.diagnostics)
        if (d.severity == "error")
            return (d.line > 0 ? "line " + std::to_string(d.line) + ": " : std::string()) + d.message;
    if (!out.log.empty())
        return out.log.substr(0, out.log.find('\n'));
    return "NVRTC failed without a message";
}

} // namespace

EvalResult Search::failure(const Pending &p, Verdict verdict, std::string reason) const
{
    EvalResult r;
    r.verdict = verdict;
    r.reason = std::move(reason);
    r.policy = policy();
    if (auto c = parseCandidate(p.source))
        r.precision = c->precision;
    return r;
}

void Search::finish(Pending &p, EvalResult result)
{
    store(m_store.updateNode(p.node, toString(result.verdict), result.reason, candidateResultJson(result, p.draft)));
    m_state.recordOutcome(p.ideaNode, result, p.node);
    ++m_tally.candidates;
    if (result.verdict == Verdict::Correct && result.timing) {
        ++m_tally.correct;
        if (result.timing->medianMs > 0)
            m_tally.times.emplace_back(result.timing->medianMs, p.node);
    }
    p.result = std::move(result);
}

void Search::processBatch(std::vector<Pending> batch, Usage &usage)
{
    while (!batch.empty()) {
        compileBatch(batch);
        evaluateBatch(batch);
        beginStretch(Gate::RepairStretch);
        // Kernels the gate demoted since the last repairs are repaired like any failure.
        std::vector<Pending> failed = batch;
        std::move(m_demoted.begin(), m_demoted.end(), std::back_inserter(failed));
        m_demoted.clear();
        std::vector<Pending> repairs = stopping() ? std::vector<Pending>{} : repairBatch(failed, usage);
        gateWhileIdle();
        leaveQueued(batch);
        batch = std::move(repairs);
    }
}

void Search::compileBatch(std::vector<Pending> &batch)
{
    std::vector<CompileJob> jobs;
    std::vector<std::size_t> index;
    const std::string arch = m_gpu.arch.empty() ? "sm_90a" : m_gpu.arch;
    for (std::size_t i = 0; i < batch.size(); ++i) {
        Pending &p = batch[i];
        // Directives are checked here, before a compiler process is bothered: a draft that names a
        // tensor the problem lacks never compiles into anything runnable.
        auto candidate = parseCandidate(p.source);
        Status checked = candidate ? checkCandidate(*candidate, m_problem) : Status(candidate.error());
        if (!checked) {
            std::string reason = "directives: " + checked.error().text();
            finish(p, failure(p, Verdict::CompileError, reason));
            report(CompileFailed{p.node, reason});
            continue;
        }
        std::vector<std::string> kernels;
        for (const auto &l : candidate->launches)
            if (std::find(kernels.begin(), kernels.end(), l.kernel) == kernels.end())
                kernels.push_back(l.kernel);
        p.kernels = kernels;
        jobs.push_back(CompileJob{p.source, std::move(kernels), arch});
        index.push_back(i);
    }
    if (jobs.empty() || stopping())
        return;

    int poolFailures = 0;
    std::string poolError;
    m_phase = Compiling;
    m_clock.enter(BudgetClock::Compiling);
    m_compiler.compileAll(jobs, [&](std::size_t j, const Result<CompileOutput> &out) {
        Pending &p = batch[index[j]];
        if (!out) {
            // Cancelled: left queued. Otherwise no compiler process could run it, which says
            // nothing about the source: the worker compiles it itself when it evaluates it.
            if (out.error().code != ErrorCode::Cancelled) {
                ++poolFailures;
                poolError = out.error().text();
            }
            return;
        }
        p.compiled = *out;
        if (!out->ok) {
            EvalResult r = failure(p, Verdict::CompileError, firstError(*out));
            r.compileLog = out->log;
            r.compileSeconds = out->seconds;
            (void)m_store.appendLog(p.node, out->log);
            report(CompileFailed{p.node, r.reason});
            finish(p, std::move(r));
            return;
        }
        if (!out->log.empty())
            (void)m_store.appendLog(p.node, out->log);
        CandidateCompiled e{p.node, out->seconds, out->cached, 0, 0};
        for (const auto &[name, res] : out->resources) {
            e.registers = std::max(e.registers, res.registers);
            e.spills = std::max(e.spills, res.spillStores + res.spillLoads);
        }
        report(e);
    });
    m_phase = Idle;
    m_clock.enter(BudgetClock::Idle);
    gateWhileIdle();
    if (poolFailures > 0)
        report(SearchMessage{"the compile pool could not compile " + std::to_string(poolFailures) + " candidate(s) (" +
                             poolError + "); the worker compiles them"});
}

void Search::evaluateBatch(std::vector<Pending> &batch)
{
    if (stopping())
        return;
    if (m_settings.compileOnly) {
        // What a compile-only search can say about a candidate that compiled: its compile log and
        // resources, and that nothing judged it yet.
        const std::string why = m_gpu.present ? "a compile-only search" : "no GPU: " + m_gpu.reason;
        for (Pending &p : batch) {
            if (p.result)
                continue;
            EvalResult r = failure(p, Verdict::NeedsGpu, "");
            if (p.compiled) {
                r.reason = "compiled for " + p.compiled->arch + "; not evaluated (" + why + ")";
                r.compileLog = p.compiled->log;
                r.compileSeconds = p.compiled->seconds;
                r.resources = p.compiled->resources;
            } else {
                r.reason = "neither compiled (no compiler process ran) nor evaluated (" + why + ")";
            }
            const std::int64_t node = p.node;
            finish(p, r);
            report(CandidateVerified{node, r.verdict, r.reason, 0});
        }
        return;
    }
    std::vector<EvalRequest> requests;
    std::vector<std::size_t> index;
    for (std::size_t i = 0; i < batch.size(); ++i) {
        const Pending &p = batch[i];
        if (p.result)
            continue;
        EvalRequest r;
        r.key = "n" + std::to_string(p.node);
        r.source = p.source;
        r.cubin = p.compiled ? p.compiled->cubin : std::string();
        if (p.compiled)
            r.loweredNames = p.compiled->loweredNames;
        r.policy = policy();
        r.trials = m_settings.trials;
        r.timingTrials = m_settings.timingTrials;
        requests.push_back(std::move(r));
        index.push_back(i);
    }
    if (requests.empty())
        return;

    const double eager = m_eager ? m_eager->medianMs : 0;
    takeGpuBack();
    // Evaluations verify and time; the time the GPU locks were held in them is the timing part.
    const double lockedBefore = m_pool.gpuLockSeconds();
    const auto evaluating = Clock::now();
    m_phase = Evaluating;
    m_clock.enter(BudgetClock::Verifying);
    m_pool.evaluate(requests, [&](std::size_t j, const EvalResult &result) {
        Pending &p = batch[index[j]];
        if (result.verdict == Verdict::Queued)
            return; // cancelled before it ran: leaveQueued() records why
        EvalResult r = result;
        if (p.compiled) { // what the compile pool measured, where the worker did not compile itself
            if (r.compileLog.empty())
                r.compileLog = p.compiled->log;
            if (r.compileSeconds == 0)
                r.compileSeconds = p.compiled->seconds;
            if (r.resources.empty())
                r.resources = p.compiled->resources;
        }
        const std::int64_t node = p.node;
        finish(p, r);
        report(CandidateVerified{node, r.verdict, r.reason, r.maxScaledError});
        // The engine could not judge it (out of GPU memory, say): the next candidates would fare
        // the same, so the search stops and says why rather than fill the tree with them.
        if (r.verdict == Verdict::EngineError)
            requestStop(StopReason::Error, "the engine could not judge candidates: " + r.reason);
        if (r.verdict == Verdict::Correct && r.timing) {
            KernelRecord k;
            k.node = node;
            const IdeaRecord *idea = m_state.idea(p.ideaNode);
            k.ideaId = idea ? idea->ideaId : p.title;
            k.source = p.source;
            k.result = r;
            k.params = p.draft.params;
            const bool best = m_state.offer(k);
            if (best)
                updateReserve();
            const double ms = r.timing->medianMs;
            report(CandidateTimed{node, *r.timing, eager > 0 && ms > 0 ? eager / ms : 0, best});
        }
    });
    m_phase = Idle;
    m_clock.enter(BudgetClock::Idle);
    const double wall = std::chrono::duration<double>(Clock::now() - evaluating).count();
    const double locked =
        (m_pool.gpuLockSeconds() - lockedBefore) / double(std::max<std::size_t>(1, m_pool.gpuCount()));
    m_clock.shift(BudgetClock::Verifying, BudgetClock::Timing, std::min(wall, locked));
}

std::vector<Search::Pending> Search::repairBatch(const std::vector<Pending> &batch, Usage &usage)
{
    std::vector<Pending> out;
    if (m_settings.repairs <= 0 || batch.empty())
        return out;
    std::vector<RepairJob> jobs;
    std::vector<const Pending *> of;
    for (const Pending &p : batch) {
        if (!p.result || !repairable(p.result->verdict) || p.draft.repairDepth >= m_settings.repairs)
            continue;
        auto idea = m_runIdeas.find(p.ideaNode);
        if (idea == m_runIdeas.end())
            continue;
        RepairJob job;
        job.idea = idea->second;
        job.failed.node = p.node;
        job.failed.ideaId = idea->second.id;
        job.failed.source = p.source;
        job.failed.result = *p.result;
        job.failed.params = p.draft.params;
        jobs.push_back(std::move(job));
        of.push_back(&p);
    }
    if (jobs.empty() || stopping())
        return out;
    const GenContext ctx = context(batch.front().round);
    Usage used;
    auto results = m_generator->repairAll(ctx, jobs, &used);
    usage += used;
    for (std::size_t i = 0; i < jobs.size() && i < results.size(); ++i) {
        const Pending &p = *of[i];
        const auto &repaired = results[i];
        if (!repaired) {
            if (repaired.error().code != ErrorCode::Cancelled)
                (void)m_store.appendLog(p.node, "the generator could not repair it: " + repaired.error().text());
            continue;
        }
        if (!*repaired)
            continue;
        const Draft &d = **repaired;
        Pending q;
        q.ideaNode = p.ideaNode;
        q.round = p.round;
        q.title = "repair: " + (d.title.empty() ? p.title : d.title);
        q.source = d.source;
        q.draft.params = d.params;
        q.draft.repairOf = p.node;
        q.draft.repairDepth = p.draft.repairDepth + 1;
        // The repair hangs under the candidate it repairs, so the tree shows what was fixed.
        if (!addCandidate(q, p.node))
            break;
        if (d.exchange > 0)
            store(m_store.linkExchange(d.exchange, q.node));
        report(CandidateQueued{q.round, q.node, q.ideaNode, p.node, q.title});
        out.push_back(std::move(q));
    }
    return out;
}

// Candidates that got no verdict because the search stopped stay "queued", with the stop as
// their reason and no result, so a reader can tell them from ones that ran.
void Search::leaveQueued(std::vector<Pending> &batch)
{
    std::string reason;
    {
        std::lock_guard lock(m_stopMutex);
        reason = m_stop ? toString(m_reason) : "not evaluated";
    }
    for (Pending &p : batch)
        if (!p.result)
            store(m_store.updateNode(p.node, node_status::Queued, reason, std::nullopt));
}

} // namespace kf
