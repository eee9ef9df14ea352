#include "search/trajectory.h"

#include "search/records.h"
#include "search/state.h"

#include <cstdio>
#include <map>
#include <set>

namespace kf {

namespace {

std::string num(const char *format, double v)
{
    char b[64];
    std::snprintf(b, sizeof b, format, v);
    return b;
}

std::string csvField(const std::string &s)
{
    if (s.find_first_of(",\"\r\n") == std::string::npos)
        return s;
    std::string out = "\"";
    for (char c : s)
        out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

} // namespace

Trajectory trajectoryFromNodes(const std::vector<NodeRecord> &nodes, double eagerMs)
{
    Trajectory t;
    t.eagerMs = eagerMs;
    std::map<std::int64_t, const NodeRecord *> byId;
    std::set<int> rounds;
    for (const auto &n : nodes) {
        byId[n.id] = &n;
        if (n.kind == NodeKind::Round)
            rounds.insert(n.round);
    }

    struct Best {
        double ms = 0;
        std::int64_t node = 0;
    };
    std::map<int, Best> roundBest;             // per round, the fastest correct candidate
    std::map<int, std::pair<int, int>> counts; // per round: judged, correct
    for (const auto &n : nodes) {
        if (n.kind != NodeKind::Candidate)
            continue;
        auto reading = readCandidate(n);
        if (!reading || reading->result.verdict == Verdict::Queued)
            continue;
        auto &c = counts[n.round];
        ++c.first;
        const EvalResult &r = reading->result;
        if (r.sanitizer && r.sanitizer->sameAs == 0) {
            ++t.sanitizer.checked;
            t.sanitizer.seconds += r.sanitizer->seconds;
            t.sanitizer.findings += r.sanitizer->outcome == "finding";
            t.sanitizer.unchecked += r.sanitizer->outcome == "unchecked";
        }
        if (r.verdict != Verdict::Correct || !r.timing || !(r.timing->medianMs > 0))
            continue;
        ++c.second;
        Best &b = roundBest[n.round];
        if (b.ms == 0 || r.timing->medianMs < b.ms)
            b = {r.timing->medianMs, n.id};
    }

    auto titleOf = [&](std::int64_t candidate) {
        std::int64_t idea = ideaAncestor(byId, candidate);
        auto it = byId.find(idea ? idea : candidate);
        return it == byId.end() ? std::string() : it->second->title;
    };

    // Kernels of round 0 (written by hand before any round) count from the start.
    Best best;
    if (auto it = roundBest.find(0); it != roundBest.end())
        best = it->second;
    for (int round : rounds) {
        if (round == 0)
            continue;
        TrajectoryRow row;
        row.round = round;
        auto rb = roundBest.find(round);
        if (rb != roundBest.end()) {
            row.roundBestMs = rb->second.ms;
            if (best.ms == 0 || rb->second.ms < best.ms) {
                best = rb->second;
                row.improved = true;
            }
        }
        row.bestMs = best.ms;
        row.bestNode = best.node;
        if (best.node)
            row.idea = titleOf(best.node);
        if (eagerMs > 0 && best.ms > 0)
            row.percentOfReference = 100.0 * eagerMs / best.ms;
        row.candidates = counts[round].first;
        row.correct = counts[round].second;
        t.rows.push_back(row);
    }
    return t;
}

Result<Trajectory> readTrajectory(const SessionStore &store)
{
    auto meta = store.sessionMeta();
    if (!meta)
        return meta.error();
    auto nodes = store.allNodes();
    if (!nodes)
        return nodes.error();
    Trajectory t = trajectoryFromNodes(*nodes, baselineMedianMs(meta->baseline));
    t.problem = meta->problemName;
    t.gpu = meta->gpuName;
    t.generator = meta->generator;
    if (auto budget = store.metaJson(session_meta::Budget))
        t.budget = readRunBudget(*budget);
    return t;
}

std::string trajectoryTable(const Trajectory &t)
{
    std::string out = t.problem.empty() ? std::string("(unnamed problem)") : t.problem;
    if (!t.gpu.empty())
        out += " on " + t.gpu;
    if (!t.generator.empty())
        out += ", " + t.generator + " generator";
    out += t.eagerMs > 0 ? "; eager PyTorch " + num("%.4f", t.eagerMs) + " ms\n" : "; eager time unknown\n";
    if (t.rows.empty())
        return out + "no rounds yet\n";
    out += "round      best ms   % of reference   candidates   idea\n";
    for (const auto &r : t.rows) {
        std::string ms = r.bestMs > 0 ? num("%.4f", r.bestMs) : "-";
        std::string pct = r.percentOfReference > 0 ? num("%.1f %%", r.percentOfReference) : "-";
        char line[160];
        std::snprintf(line, sizeof line, "%5d %12s %16s %6d of %-3d %s", r.round, ms.c_str(), pct.c_str(), r.correct,
                      r.candidates, r.improved ? "* " : "  ");
        out += line + (r.bestNode ? r.idea + " (#" + std::to_string(r.bestNode) + ")" : std::string("-")) + "\n";
    }
    out += "(* the round that set the best; candidates: correct of judged)\n";
    if (const SanitizerTotals &s = t.sanitizer; s.checked > 0)
        out += "compute-sanitizer: " + std::to_string(s.checked) + " kernels run under it in " +
            num("%.1f", s.seconds) + " s, " + std::to_string(s.findings) + " demoted" +
            (s.unchecked ? ", " + std::to_string(s.unchecked) + " it could not check" : std::string()) + "\n";
    if (t.budget)
        out += "last run: " + describe(*t.budget) + "\n";
    return out;
}

std::string trajectoryCsv(const Trajectory &t)
{
    std::string out =
        "round,best_ms,percent_of_reference,speedup,best_node,idea,improved,round_best_ms,candidates,correct\n";
    auto opt = [](double v, const char *format) { return v > 0 ? num(format, v) : std::string(); };
    for (const auto &r : t.rows) {
        out += std::to_string(r.round) + "," + opt(r.bestMs, "%.6g") + "," + opt(r.percentOfReference, "%.2f") + "," +
            opt(r.percentOfReference / 100.0, "%.4f") + "," + (r.bestNode ? std::to_string(r.bestNode) : "") + "," +
            csvField(r.idea) + "," + (r.improved ? "1" : "0") + "," + opt(r.roundBestMs, "%.6g") + "," +
            std::to_string(r.candidates) + "," + std::to_string(r.correct) + "\n";
    }
    return out;
}

} // namespace kf
