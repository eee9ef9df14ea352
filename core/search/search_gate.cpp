// The sanitizer gate (docs/search.md, "The sanitizer gate"): every kernel the generator is shown
// (the top-k and the bank) and every kernel reported as a round's best has run once under
// compute-sanitizer. A finding demotes the kernel, and whichever kernel takes its place is checked
// in turn. Kernels nobody is shown are never run under the tool: it costs seconds a kernel.
#include "search/search.h"

#include "kernel/candidate.h"
#include "util/hash.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace kf {

namespace {

std::string secondsText(double s)
{
    char b[32];
    std::snprintf(b, sizeof b, "%.1f s", s);
    return b;
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

void Search::setupGate()
{
    m_gate = Gate{};
    if (m_settings.compileOnly)
        return; // nothing runs, so there is nothing to check
    if (!m_settings.sanitize) {
        m_gate.why = "sanitize = false in the settings (--no-sanitize)";
    } else {
        m_gate.probe = m_pool.probeSanitizer(); // runs under the phase startWorkers set, so a cancel reaches it
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
               " on each kernel before it enters the top-k or the bank or is reported as a round's best; probe " +
               secondsText(p.seconds);
        if (!m_gate.racecheck)
            text += "; " + p.reason;
    } else {
        text = "sanitizer gate off: " + m_gate.why + "; kernels enter the top-k and the bank unchecked";
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

// The kernels that are shown or reported and have not been through the gate.
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
    if (auto [ms, node] = m_tally.best(); node != 0)
        if (const KernelRecord *k = m_state.find(node))
            consider(*k);
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

void Search::gate(std::vector<Pending> *batch)
{
    if (!m_gate.on)
        return;
    std::set<std::int64_t> asked; // once per kernel and call, whatever came of it
    while (!stopping()) {
        std::vector<KernelRecord> waiting;
        for (KernelRecord &k : awaitingGate())
            if (!asked.count(k.node))
                waiting.push_back(std::move(k));
        if (waiting.empty())
            return;
        std::vector<SanitizeRequest> requests;
        std::vector<const KernelRecord *> of;
        std::set<std::string> sources;
        for (const KernelRecord &k : waiting) {
            const std::string hash = contentHash(k.source);
            // The same source (a repair that changed nothing, a template drawn twice) was judged,
            // or is being judged in this pass: its result serves, in this pass or the next.
            if (auto hit = m_gate.bySource.find(hash); hit != m_gate.bySource.end()) {
                asked.insert(k.node);
                applyGate(k, hit->second.second, hit->second.first, batch);
                continue;
            }
            if (!sources.insert(hash).second)
                continue;
            asked.insert(k.node);
            requests.push_back(sanitizeRequest(k));
            of.push_back(&k);
            std::vector<std::string> tools;
            for (SanitizerTool t : requests.back().tools)
                tools.push_back(toString(t));
            report(CandidateSanitizing{k.node, tools});
        }
        if (requests.empty())
            continue; // what the reused results demoted may have brought others forward
        m_phase = Evaluating;
        m_pool.sanitize(requests, [&](std::size_t i, const SanitizeResult &r) {
            if (r.cancelled)
                return; // stays unchecked; the next run looks at it first
            m_gate.bySource.try_emplace(contentHash(of[i]->source), of[i]->node, r);
            applyGate(*of[i], r, 0, batch);
        });
        m_phase = Idle;
    }
}

void Search::applyGate(const KernelRecord &k, const SanitizeResult &r, std::int64_t sameAs,
                       std::vector<Pending> *batch)
{
    SanitizerCheck check = r.check;
    if (sameAs != 0) {
        check.sameAs = sameAs;
        check.seconds = 0;
    } else {
        ++m_tally.sanitized;
        m_tally.sanitizerSeconds += check.seconds;
    }
    // The stored result, so that what the search keeps beside it (the draft) stays.
    auto node = m_store.node(k.node);
    std::optional<CandidateReading> reading = node ? readCandidate(*node) : std::nullopt;
    EvalResult result = reading ? reading->result : k.result;
    result.sanitizer = check;
    const bool finding = check.outcome == "finding";
    std::string log;
    if (finding) {
        result.verdict = r.finding == SanitizerTool::Racecheck ? Verdict::Racy : Verdict::Sanitizer;
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
        if (ideaNode != 0 && !m_roundIdeas.count(ideaNode))
            reviseIdea(ideaNode); // an idea of an earlier round: its node is already written
        if (batch)
            for (Pending &p : *batch)
                if (p.node == k.node)
                    p.result = result;
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
