#include "search/state.h"

#include "search/records.h"

#include <algorithm>

namespace kf {

void SearchState::setLimits(int topK, int bankSize)
{
    m_topK = std::max(0, topK);
    m_bankSize = std::max(0, bankSize);
}

bool SearchState::offer(const KernelRecord &k)
{
    if (k.result.verdict != Verdict::Correct || !k.result.timing || !(k.result.timing->medianMs > 0))
        return false;
    for (const auto &c : m_correct)
        if (c.node == k.node)
            return false;
    double previous = bestMs();
    // After every kernel of equal or smaller time: among equals the older one stays ahead.
    auto at = std::upper_bound(m_correct.begin(), m_correct.end(), medianOf(k),
                               [](double ms, const KernelRecord &c) { return ms < medianOf(c); });
    m_correct.insert(at, k);
    return previous == 0 || medianOf(k) < previous;
}

std::vector<KernelRecord> SearchState::topK() const
{
    auto n = std::min<std::size_t>(m_correct.size(), std::size_t(m_topK));
    return {m_correct.begin(), m_correct.begin() + std::ptrdiff_t(n)};
}

std::vector<KernelRecord> SearchState::bank() const
{
    std::vector<KernelRecord> out;
    std::set<std::string> seen;
    for (const auto &k : m_correct) {
        if (int(out.size()) >= m_bankSize)
            break;
        if (seen.insert(k.ideaId).second)
            out.push_back(k);
    }
    return out;
}

const KernelRecord *SearchState::best() const { return m_correct.empty() ? nullptr : &m_correct.front(); }

double SearchState::bestMs() const { return m_correct.empty() ? 0 : medianOf(m_correct.front()); }

const KernelRecord *SearchState::find(std::int64_t node) const
{
    for (const auto &k : m_correct)
        if (k.node == node)
            return &k;
    return nullptr;
}

const KernelRecord *SearchState::fastestClean() const
{
    for (const auto &k : m_correct)
        if (k.result.sanitizer && k.result.sanitizer->outcome == "clean")
            return &k;
    return nullptr;
}

void SearchState::setSanitizer(std::int64_t node, const SanitizerCheck &check)
{
    for (auto &k : m_correct)
        if (k.node == node)
            k.result.sanitizer = check;
}

void SearchState::demote(std::int64_t node, std::int64_t ideaNode, const EvalResult &now)
{
    std::erase_if(m_correct, [&](const KernelRecord &k) { return k.node == node; });
    auto it = std::find_if(m_ideas.begin(), m_ideas.end(), [&](const IdeaRecord &i) { return i.node == ideaNode; });
    if (it == m_ideas.end())
        return;
    IdeaRecord &idea = *it;
    auto &times = m_correctTimes[ideaNode];
    if (times.erase(node) > 0) {
        --idea.correct;
        idea.bestMs = 0;
        for (const auto &[candidate, ms] : times)
            if (ms > 0 && (idea.bestMs == 0 || ms < idea.bestMs))
                idea.bestMs = ms;
    }
    countFailure(idea, now);
}

void SearchState::addIdea(IdeaRecord idea)
{
    m_tried.insert({idea.ideaId, idea.parentNode});
    m_ideas.push_back(std::move(idea));
}

bool SearchState::tried(const std::string &ideaId, std::int64_t parentNode) const
{
    return m_tried.count({ideaId, parentNode}) > 0;
}

const IdeaRecord *SearchState::idea(std::int64_t node) const
{
    for (const auto &i : m_ideas)
        if (i.node == node)
            return &i;
    return nullptr;
}

void SearchState::recordOutcome(std::int64_t ideaNode, const EvalResult &r, std::int64_t candidate)
{
    if (r.verdict == Verdict::Queued || r.verdict == Verdict::Compiling)
        return;
    auto it = std::find_if(m_ideas.begin(), m_ideas.end(), [&](const IdeaRecord &i) { return i.node == ideaNode; });
    if (it == m_ideas.end())
        return;
    IdeaRecord &idea = *it;
    if (r.verdict == Verdict::NeedsGpu || r.verdict == Verdict::EngineError) { // nothing judged it
        ++idea.unjudged;
        return;
    }
    if (r.verdict == Verdict::Correct) {
        ++idea.correct;
        if (r.timing && r.timing->medianMs > 0 && (idea.bestMs == 0 || r.timing->medianMs < idea.bestMs))
            idea.bestMs = r.timing->medianMs;
        if (candidate != 0)
            m_correctTimes[ideaNode][candidate] = r.timing ? r.timing->medianMs : 0;
        idea.failure.clear();
        return;
    }
    countFailure(idea, r);
}

void SearchState::countFailure(IdeaRecord &idea, const EvalResult &r)
{
    const std::int64_t ideaNode = idea.node;
    ++idea.failed;
    Failures &f = m_failures[ideaNode];
    const std::string verdict = toString(r.verdict);
    ++f.count[verdict];
    f.first.try_emplace(verdict, r.reason);
    if (idea.correct > 0)
        return;
    auto commonest = std::max_element(f.count.begin(), f.count.end(),
                                      [](const auto &a, const auto &b) { return a.second < b.second; });
    const std::string &reason = f.first[commonest->first];
    idea.failure = reason.empty() ? commonest->first : commonest->first + ": " + reason;
}

std::int64_t ideaAncestor(const std::map<std::int64_t, const NodeRecord *> &byId, std::int64_t node)
{
    // Bounded by the number of nodes, in case a damaged file holds a cycle.
    for (std::size_t hops = 0; hops <= byId.size(); ++hops) {
        auto it = byId.find(node);
        if (it == byId.end())
            return 0;
        if (it->second->kind == NodeKind::Idea)
            return node;
        if (!it->second->parent)
            return 0;
        node = *it->second->parent;
    }
    return 0;
}

RestoredSearch restoreSearch(const std::vector<NodeRecord> &nodes, int topK, int bankSize)
{
    RestoredSearch out{SearchState(topK, bankSize), std::nullopt, {}, {}, {}, {}};
    std::map<std::int64_t, const NodeRecord *> byId;
    for (const auto &n : nodes)
        byId[n.id] = &n;
    // The parameters of each idea's evaluated candidates, so the generator knows which points it has
    // already generated.
    std::map<std::int64_t, std::vector<nlohmann::json>> points;
    for (const auto &n : nodes)
        if (n.kind == NodeKind::Candidate)
            if (auto reading = readCandidate(n); reading && reading->draft.params.is_object())
                if (std::int64_t idea = ideaAncestor(byId, n.id))
                    points[idea].push_back(reading->draft.params);

    for (const auto &n : nodes) {
        out.state.lastRound = std::max(out.state.lastRound, n.round);
        if (n.kind == NodeKind::Root && !out.root) {
            out.root = n.id;
        } else if (n.kind == NodeKind::Round) {
            if (n.status == node_status::Running)
                out.unfinishedRounds.push_back(n.id);
        } else if (n.kind == NodeKind::Idea) {
            IdeaInfo info = readIdeaInfo(n);
            IdeaRecord r;
            r.node = n.id;
            r.round = n.round;
            r.ideaId = info.ideaId;
            r.title = n.title;
            r.text = n.text;
            r.parentNode = info.parentKernel;
            if (auto it = points.find(n.id); it != points.end())
                r.points = std::move(it->second);
            out.state.addIdea(std::move(r));
            if (n.status == node_status::Queued)
                out.unfinishedIdeas.push_back(n.id);
        }
    }
    // Candidates after ideas: every idea is known by the time its candidates are counted.
    for (const auto &n : nodes) {
        if (n.kind != NodeKind::Candidate)
            continue;
        if ((n.status == node_status::Queued || n.status == "compiling") && n.reason.empty())
            out.unfinishedCandidates.push_back(n.id);
        std::int64_t ideaNode = ideaAncestor(byId, n.id);
        if (ideaNode)
            out.ideaOf[n.id] = ideaNode;
        auto reading = readCandidate(n);
        if (!reading)
            continue;
        out.state.recordOutcome(ideaNode, reading->result, n.id);
        KernelRecord k;
        k.node = n.id;
        const IdeaRecord *idea = out.state.idea(ideaNode);
        k.ideaId = idea ? idea->ideaId : n.title; // a hand-written kernel stands for itself
        k.source = n.text;
        k.result = reading->result;
        k.params = reading->draft.params;
        out.state.offer(k);
    }
    return out;
}

} // namespace kf
