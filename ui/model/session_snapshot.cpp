#include "model/session_snapshot.h"

#include "search/state.h"

#include <algorithm>
#include <functional>

namespace kf::ui {

const NodeView *SessionSnapshot::node(std::int64_t id) const
{
    auto it = index.find(id);
    return it == index.end() ? nullptr : &nodes[it->second];
}

const std::vector<std::int64_t> &SessionSnapshot::children(std::int64_t id) const
{
    static const std::vector<std::int64_t> none;
    auto it = childIds.find(id);
    return it == childIds.end() ? none : it->second;
}

std::optional<std::int64_t> SessionSnapshot::rootId() const
{
    for (const NodeView &n : nodes)
        if (n.record.kind == NodeKind::Root)
            return n.id();
    return std::nullopt;
}

std::string SessionSnapshot::ideaTitle(std::int64_t candidate) const
{
    const NodeView *n = node(candidate);
    const NodeView *idea = n ? node(n->ideaNode) : nullptr;
    return idea ? idea->record.title : std::string();
}

std::string SessionSnapshot::ideaText(std::int64_t candidate) const
{
    const NodeView *n = node(candidate);
    const NodeView *idea = n ? node(n->ideaNode) : nullptr;
    return idea ? idea->record.text : std::string();
}

namespace {

double jsonMedian(const Result<nlohmann::json> &j)
{
    if (!j || !j->is_object())
        return 0;
    const nlohmann::json &t = j->contains("timing") ? (*j)["timing"] : *j;
    return t.is_object() ? t.value("median_ms", 0.0) : 0.0;
}

} // namespace

namespace {

// What the session's meta table says beyond SessionMeta: the problem, its settings, the floor and
// the baselines.
void readMeta(SessionSnapshot &s, const SessionStore &store)
{
    if (auto p = parseProblem(s.meta.problemText, s.meta.problemName + ".toml", s.meta.problemVariant))
        s.problem = *p;
    else
        s.problemError = p.error().text();
    if (auto st = settingsFromJson(s.meta.settings))
        s.settings = *st;
    if (auto gs = store.metaJson(session_meta::GeneratorSettings))
        s.generatorSettings = *gs;
    if (auto c = store.metaJson("ceilings"); c && c->is_object()) {
        try {
            s.ceilings = c->get<Ceilings>();
        } catch (const std::exception &) {
            // A foreign value leaves the floor unknown; the rest of the session still shows.
        }
    }
    s.eagerMs = baselineMedianMs(s.meta.baseline);
    s.compiledMs = jsonMedian(store.metaJson(kTorchCompileMeta));
    if (auto ev = store.events(); ev && !ev->empty())
        s.lastEvent = ev->back().id;
}

// The records as views, each candidate with its times, and the fastest correct candidate.
void addNodes(SessionSnapshot &s, const std::vector<NodeRecord> &nodes)
{
    std::map<std::int64_t, const NodeRecord *> byId;
    for (const NodeRecord &n : nodes)
        byId[n.id] = &n;
    double bestMs = 0;
    s.nodes.reserve(nodes.size());
    for (const NodeRecord &r : nodes) {
        NodeView v;
        v.record = r;
        v.shownStatus = r.status;
        if (r.parent) {
            s.childIds[*r.parent].push_back(r.id);
            if (auto it = s.index.find(*r.parent); it != s.index.end())
                v.depth = s.nodes[it->second].depth + 1;
        }
        if (r.kind == NodeKind::Candidate) {
            v.ideaNode = ideaAncestor(byId, r.id);
            if (auto reading = readCandidate(r)) {
                v.result = reading->result;
                v.draft = reading->draft;
                const EvalResult &e = reading->result;
                v.sanitizerUnchecked = e.sanitizer && e.sanitizer->outcome == "unchecked";
                if (e.verdict == Verdict::Correct && e.timing && e.timing->medianMs > 0) {
                    v.medianMs = e.timing->medianMs;
                    if (s.eagerMs > 0)
                        v.speedup = s.eagerMs / v.medianMs;
                    if (e.floorMs > 0)
                        v.percentOfFloor = 100.0 * e.floorMs / v.medianMs;
                    if (bestMs == 0 || v.medianMs < bestMs) {
                        bestMs = v.medianMs;
                        s.bestNode = r.id;
                    }
                }
            }
        }
        s.index[r.id] = s.nodes.size();
        s.nodes.push_back(std::move(v));
    }
}

// Rounds and ideas show the best time found below them (through repairs and hand edits too).
void passBestTimesUp(SessionSnapshot &s)
{
    for (std::size_t i = 0; i < s.nodes.size(); ++i) {
        if (!s.nodes[i].isCandidate() || s.nodes[i].medianMs <= 0)
            continue;
        const double ms = s.nodes[i].medianMs;
        std::optional<std::int64_t> up = s.nodes[i].record.parent;
        for (std::size_t hops = 0; up && hops <= s.nodes.size(); ++hops) {
            auto it = s.index.find(*up);
            if (it == s.index.end())
                break;
            NodeView &p = s.nodes[it->second];
            if (p.record.kind == NodeKind::Root)
                break;
            if (!p.isCandidate() && (p.medianMs == 0 || ms < p.medianMs)) {
                p.medianMs = ms;
                p.speedup = s.eagerMs > 0 ? s.eagerMs / ms : 0;
            }
            up = p.record.parent;
        }
    }
}

// A finished round is green only when it found a correct kernel.
void markRoundsWithoutKernel(SessionSnapshot &s)
{
    for (NodeView &n : s.nodes) {
        if (n.record.kind != NodeKind::Round || n.record.status != node_status::Finished || n.medianMs > 0)
            continue;
        bool unjudged = false;
        for (std::int64_t idea : s.children(n.id()))
            if (const NodeView *i = s.node(idea))
                unjudged |= i->record.status == node_status::NeedsGpu;
        if (unjudged)
            n.shownStatus = node_status::NeedsGpu;
        else if (!s.children(n.id()).empty())
            n.shownStatus = node_status::Failed;
    }
}

// The best path: the best kernel and its ancestors, bounded in case a damaged file holds a cycle.
void markBestPath(SessionSnapshot &s)
{
    std::int64_t id = s.bestNode;
    for (std::size_t hops = 0; id && hops <= s.nodes.size(); ++hops) {
        auto it = s.index.find(id);
        if (it == s.index.end())
            break;
        NodeView &n = s.nodes[it->second];
        n.onBestPath = true;
        id = n.record.parent.value_or(0);
    }
}

std::string versionOf(const SessionStore &store, const std::vector<NodeRecord> &nodes, std::int64_t lastEvent)
{
    std::string newest;
    for (const NodeRecord &r : nodes)
        newest = std::max(newest, r.updated);
    std::string metaText;
    if (auto all = store.allMeta())
        for (const auto &[k, v] : *all)
            metaText += k + '=' + v + '\n';
    return std::to_string(nodes.size()) + "/" + newest + "/" + std::to_string(lastEvent) + "/" +
        std::to_string(std::hash<std::string>{}(metaText));
}

Result<std::shared_ptr<SessionSnapshot>> build(const SessionStore &store)
{
    auto s = std::make_shared<SessionSnapshot>();
    s->path = store.path();
    s->readOnly = store.readOnly();
    auto meta = store.sessionMeta();
    if (!meta)
        return meta.error();
    s->meta = *meta;
    auto nodes = store.allNodes();
    if (!nodes)
        return nodes.error();

    readMeta(*s, store);
    addNodes(*s, *nodes);
    passBestTimesUp(*s);
    markRoundsWithoutKernel(*s);
    markBestPath(*s);
    s->version = versionOf(store, *nodes, s->lastEvent);
    s->trajectory = trajectoryFromNodes(*nodes, s->eagerMs);
    s->trajectory.problem = s->meta.problemName;
    s->trajectory.gpu = s->meta.gpuName;
    s->trajectory.generator = s->meta.generator;
    return s;
}

} // namespace

Result<SnapshotPtr> readSnapshot(const SessionStore &store)
{
    auto s = build(store);
    if (!s)
        return s.error();
    return SnapshotPtr(std::move(*s));
}

Result<SnapshotPtr> readSnapshot(const std::string &path, bool writable)
{
    auto store = SessionStore::open(path, true);
    if (!store)
        return store.error();
    auto s = build(*store);
    if (!s)
        return s.error();
    (*s)->readOnly = !writable;
    return SnapshotPtr(std::move(*s));
}

} // namespace kf::ui
