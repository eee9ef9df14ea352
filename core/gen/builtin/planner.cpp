#include "gen/builtin/planner.h"

#include "kernel/candidate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

namespace kf::builtin {

namespace {

constexpr double kAssumedBandwidthGBs = 4000; // an H200's copy rate, when nothing was measured

std::string fmt(const char *format, double v)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, format, v);
    return buf;
}
std::string ms(double v) { return fmt(v < 0.1 ? "%.4f ms" : "%.3f ms", v); }
std::string times(double v) { return fmt("%.2gx", v); }

double measuredMs(const KernelRecord &k) { return k.result.timing ? k.result.timing->medianMs : 0; }

// The catalogue idea a kernel came from: the "idea" of its parameters, else its idea id.
std::string ideaOf(const KernelRecord &k)
{
    if (k.params.is_object() && k.params.contains("idea") && k.params["idea"].is_string())
        return k.params["idea"].get<std::string>();
    return catalogueId(k.ideaId);
}

// The cost model's view of a measured kernel, when it came from the catalogue.
std::optional<Estimate> modelOf(const KernelRecord &k, const Target &t)
{
    const IdeaDef *def = findIdea(ideaOf(k));
    if (!def || !def->estimate)
        return std::nullopt;
    Point p = pointFromJson(k.params);
    for (const ParamDim &d : def->space)
        if (!p.count(d.name))
            return std::nullopt;
    if (def->check && !def->check(t, p).empty())
        return std::nullopt;
    return def->estimate(t, p);
}

struct History {
    std::set<std::pair<std::int64_t, std::string>> onParent; // (parent, idea id) pairs tried
    std::set<std::string> tried;                             // catalogue ids tried anywhere
    std::set<std::string> established;                       // catalogue ids with a correct kernel
    std::map<std::string, std::string> failure;              // why an idea without a correct kernel failed
};

History history(const GenContext &ctx)
{
    History h;
    for (const IdeaRecord &r : ctx.tried) {
        h.onParent.insert({r.parentNode, r.ideaId});
        if (!isTuneId(r.ideaId))
            h.tried.insert(catalogueId(r.ideaId));
        if (r.correct > 0)
            h.established.insert(catalogueId(r.ideaId));
        else if (!r.failure.empty())
            h.failure[catalogueId(r.ideaId)] = r.failure;
    }
    for (const auto *list : {&ctx.topK, &ctx.bank})
        for (const KernelRecord &k : *list)
            if (k.result.verdict == Verdict::Correct)
                h.established.insert(ideaOf(k));
    return h;
}

// Each dimension's values sorted by size: a value's position there is how far it is from another.
std::vector<int> sortedValues(const ParamDim &d)
{
    std::vector<int> v = d.values;
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
}

int position(const std::vector<int> &sorted, int value)
{
    return int(std::lower_bound(sorted.begin(), sorted.end(), value) - sorted.begin());
}

// A kernel's point when it is a valid point of its catalogue idea (a local search can start there).
std::optional<Point> validCentre(const KernelRecord &k, const Target &t, const IdeaDef &def)
{
    if (k.result.verdict != Verdict::Correct || !k.params.is_object())
        return std::nullopt;
    Point p = pointFromJson(k.params);
    for (const ParamDim &d : def.space)
        if (!p.count(d.name))
            return std::nullopt;
    if (def.check && !def.check(t, p).empty())
        return std::nullopt;
    return p;
}

// nearPoints over an idea's valid points (already ranked by the cost model).
std::vector<Point> nearFrom(const IdeaDef &def, const Point &centre, const std::vector<Point> &valid)
{
    std::vector<std::pair<Ring, const Point *>> ranked;
    for (const Point &p : valid)
        if (p != centre)
            ranked.push_back({ringOf(def, centre, p), &p});
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
    std::vector<Point> out;
    for (const auto &[ring, p] : ranked)
        out.push_back(*p);
    return out;
}

std::vector<Point> tuneFrom(const IdeaDef &def, const Point &centre, const std::vector<Point> &valid,
                            const std::set<Point> &skip)
{
    std::vector<Point> out;
    // A centre no kernel was measured at comes first.
    if (!skip.count(centre) && std::find(valid.begin(), valid.end(), centre) != valid.end())
        out.push_back(centre);
    for (Point &p : nearFrom(def, centre, valid)) {
        if (int(out.size()) >= kPointsPerSearch)
            break;
        if (!skip.count(p))
            out.push_back(std::move(p));
    }
    return out;
}

// Valid points of each idea, computed once per call.
class ValidCache {
public:
    explicit ValidCache(const Target &t) : m_t(t) {}
    const std::vector<Point> &of(const IdeaDef &def)
    {
        auto it = m_points.find(def.id);
        if (it == m_points.end())
            it = m_points.emplace(def.id, validPoints(def, m_t)).first;
        return it->second;
    }

private:
    const Target &m_t;
    std::map<std::string, std::vector<Point>> m_points;
};

PointSets replay(const GenContext &ctx, ValidCache &valid)
{
    PointSets done;
    auto keep = [&](const KernelRecord &k) {
        if (k.params.is_object())
            done[ideaOf(k)].insert(pointFromJson(k.params));
    };
    for (std::size_t i = 0; i < ctx.tried.size();) {
        // One round at a time: its ideas were planned from what earlier rounds generated, and its
        // local searches share out the points between them.
        std::size_t end = i;
        std::int64_t first = ctx.tried[i].node;
        while (end < ctx.tried.size() && ctx.tried[end].round == ctx.tried[i].round)
            first = std::min(first, ctx.tried[end++].node);
        // Kernels kept now that were measured before this round was planned (nodes grow).
        for (const auto *list : {&ctx.topK, &ctx.bank})
            for (const KernelRecord &k : *list)
                if (k.node < first)
                    keep(k);
        PointSets claimed, drawn;
        for (; i < end; ++i) {
            const IdeaRecord &r = ctx.tried[i];
            const std::string cat = catalogueId(r.ideaId);
            if (!r.points.empty()) {
                for (const nlohmann::json &j : r.points) {
                    const std::string id = j.is_object() && j.contains("idea") && j["idea"].is_string()
                        ? j["idea"].get<std::string>()
                        : cat;
                    drawn[id].insert(pointFromJson(j));
                    claimed[id].insert(pointFromJson(j));
                }
                continue;
            }
            const IdeaDef *def = findIdea(cat);
            int left = r.correct + r.failed;
            if (!def)
                continue;
            std::set<Point> &already = done[cat];
            if (isTuneId(r.ideaId)) {
                const auto centre = tuneCentre(r.ideaId);
                if (!centre)
                    continue;
                std::set<Point> skip = already;
                skip.insert(claimed[cat].begin(), claimed[cat].end());
                for (const Point &p : tuneFrom(*def, *centre, valid.of(*def), skip)) {
                    claimed[cat].insert(p);
                    if (left-- > 0)
                        drawn[cat].insert(p);
                }
            } else {
                for (const Point &p : valid.of(*def)) {
                    if (left <= 0)
                        break;
                    if (!already.count(p) && drawn[cat].insert(p).second)
                        --left;
                }
            }
        }
        for (auto &[id, points] : drawn)
            done[id].insert(points.begin(), points.end());
    }
    for (const auto *list : {&ctx.topK, &ctx.bank})
        for (const KernelRecord &k : *list)
            keep(k);
    return done;
}

// Where an option stands in the round: fresh ideas and local searches near the top-k kernels
// first (by expected gain), then near the bank's kernels of other ideas, then farther out, then
// ideas the model expects to be slow.
enum Group { Primary, NearBank, Wider, Slow };

struct Option {
    Idea idea;
    double gain = 1; // expected speedup over the best so far (or the eager baseline)
    int tier = 0;    // 0: needs satisfied; 1: builds on an idea proposed in the same round
    Group group = Primary;
    Estimate estimate; // a catalogue idea's, at the point the model ranks first
    // A local search: its idea, centre, the kernel it starts from (none: the model's best point),
    // the ring of its nearest point not generated yet; what its why says before its points are
    // known, and how many of the idea's valid points there are and how many were generated.
    const IdeaDef *def = nullptr;
    Point centre;
    const KernelRecord *from = nullptr;
    Ring ring;
    double fromMs = 0;
    std::string start;
    std::size_t total = 0, measured = 0;
};

// Where the gain is measured from: the best kernel (scaled by how far the model is off for it),
// else the eager baseline.
struct Baseline {
    const KernelRecord *best = nullptr;
    std::optional<Estimate> model; // the cost model's view of the best kernel
    double ms = 0;                 // the best kernel's time
    double floor = 0;              // the memory floor
};

Baseline baselineOf(const GenContext &ctx, const Target &t)
{
    Baseline b;
    b.floor = memoryFloorMs(ctx);
    for (const KernelRecord &k : ctx.topK)
        if (k.result.verdict == Verdict::Correct && measuredMs(k) > 0) {
            b.best = &k;
            break;
        }
    b.model = b.best ? modelOf(*b.best, t) : std::nullopt;
    b.ms = b.best ? measuredMs(*b.best) : 0;
    return b;
}

// The explanations. Every why starts from where the round stands.
std::string roundContext(const GenContext &ctx, const Target &t, const Baseline &b)
{
    const double floor = b.floor;
    if (!b.best) {
        std::string context = "nothing measured yet; the memory floor is " + ms(floor);
        if (ctx.eager)
            context += " and eager PyTorch takes " + ms(ctx.eager->medianMs);
        return context;
    }
    const KernelRecord &best = *b.best;
    const KernelHealth health = kernelHealth(best, ctx.problem, t.smemPerSm);
    std::string context = "best so far is " + ideaOf(best) +
        (best.params.is_object() ? " (" + pointText(pointFromJson(best.params)) + ")" : "") + " at " + ms(b.ms) + ", " +
        times(b.ms / floor) + " the memory floor of " + ms(floor);
    if (b.model)
        context += ": it " + b.model->reads + " (" + b.model->grid + ")";
    if (!health.note.empty())
        context += "; it " + health.note;
    return context;
}

std::string freshWhy(const std::string &context, const Baseline &b, const IdeaDef &d, const Option &o)
{
    std::string why = context + ". " + d.title + ": it " + o.estimate.reads + " (" + o.estimate.grid + ")";
    if (b.best)
        why += "; the model expects " + times(o.gain) + " the speed";
    else if (d.needs.empty())
        why += "; the simplest correct kernel for this pattern, to measure against";
    return why;
}

std::string failureOf(const History &h, const std::string &id)
{
    return h.failure.count(id) ? " (" + h.failure.at(id) + ")" : std::string();
}

// The needs of `d` without a correct kernel, when nothing correct was measured yet.
std::string failedNeeds(const History &h, const IdeaDef &d)
{
    std::string failed;
    for (const auto &n : d.needs)
        if (!h.established.count(n))
            failed += (failed.empty() ? "" : "; ") + n + " failed" + failureOf(h, n);
    return failed;
}

// The needs of `d` that will not get a correct kernel: they failed, or are not in the catalogue.
std::string unmetNeeds(const History &h, const Target &t, const IdeaDef &d)
{
    std::string failed;
    for (const auto &n : d.needs) {
        if (h.established.count(n))
            continue;
        if (const IdeaDef *need = findIdea(n); need && !need->whyNot(t).empty())
            continue;
        failed += (failed.empty() ? "" : "; ") + n +
            (h.tried.count(n) ? " failed" + failureOf(h, n) : std::string(" does not apply here"));
    }
    return failed;
}

std::string triedWithout(const std::string &context, const std::string &failed, const IdeaDef &d)
{
    return context + ". " + failed + ", so " + d.id + " is tried without it";
}

// Where a local search starts: the kernel it starts from and how it did, or the idea's record.
std::string searchStart(const GenContext &ctx, const Baseline &b, const Option &o, const KernelHealth &health)
{
    const IdeaDef &def = *o.def;
    const double floor = b.floor;
    std::string start;
    if (o.from) {
        start = def.id + " kernel #" + std::to_string(o.from->node) + " (" + pointText(o.centre) + ") measured " +
            ms(o.fromMs) + ", " + times(o.fromMs / floor) + " the memory floor of " + ms(floor);
        if (b.best && o.from->node == b.best->node)
            start += ", the fastest so far";
        else if (b.ms > 0)
            start += ", " + times(o.fromMs / b.ms) + " the fastest (" + ms(b.ms) + ")";
        if (!health.note.empty())
            start += "; it " + health.note;
        return start;
    }
    double ideaMs = 0;
    std::string failure;
    for (const IdeaRecord &r : ctx.tried)
        if (catalogueId(r.ideaId) == def.id) {
            if (r.bestMs > 0 && (ideaMs == 0 || r.bestMs < ideaMs))
                ideaMs = r.bestMs;
            if (!r.failure.empty())
                failure = r.failure;
        }
    start = "no kernel of " + def.id + " is kept";
    if (ideaMs > 0)
        start += " (its best measured " + ms(ideaMs) + ", " + times(ideaMs / floor) + " the memory floor)";
    else if (!failure.empty())
        start += " (its candidates failed: " + failure + ")";
    start += "; the search starts from the point the cost model ranks first among those not measured, " +
        pointText(o.centre);
    return start;
}

std::string searchWhy(const Option &o, const std::vector<Point> &points)
{
    const Ring first = ringOf(*o.def, o.centre, points.front()), last = ringOf(*o.def, o.centre, points.back());
    return o.start + "; " + std::to_string(o.measured) + " of its " + std::to_string(o.total) +
        " valid points are measured, and the next " + std::to_string(points.size()) + " around it have " +
        ringText(first) + (last != first ? ", then " + ringText(last) : "") + ", best first by the cost model";
}

std::string searchText(const IdeaDef &def, const Point &centre)
{
    return "Measure " + def.id + " at the parameter points around " + pointText(centre) +
        ", nearest first (one value moved at a time, then two, then farther): the cost model ranks them, "
        "the GPU decides.";
}

// The order of the round's options (see Group); within a group of local searches, nearest ring
// first, then those starting from faster kernels.
bool ranksBefore(const Option &a, const Option &b)
{
    if (a.group != b.group)
        return a.group < b.group;
    if (a.group == Primary) {
        if (a.tier != b.tier)
            return a.tier < b.tier;
        return a.gain > b.gain;
    }
    if (a.def && b.def && a.ring != b.ring)
        return a.ring < b.ring;
    return (a.def != nullptr) > (b.def != nullptr) || ((a.def != nullptr) == (b.def != nullptr) && a.fromMs < b.fromMs);
}

// One round's options: the catalogue's fresh ideas, then local searches, ranked and cut to a count.
class RoundPlan {
public:
    RoundPlan(const GenContext &ctx, const Target &t)
        : m_ctx(ctx), m_t(t), m_h(history(ctx)), m_base(baselineOf(ctx, t)), m_context(roundContext(ctx, t, m_base)),
          m_valid(t)
    {
    }
    void addFreshIdeas();
    void addLocalSearches();
    std::vector<Idea> pick(int count);

private:
    Option &consider(const IdeaDef &d, int tier);
    bool needsIn(const IdeaDef &d, const std::set<std::string> &known) const;
    bool waitsForSteps(const IdeaDef &d) const;
    void searchAround(const IdeaDef &def, const Point &centre, const KernelRecord *from, bool top);

    const GenContext &m_ctx;
    const Target &m_t;
    const History m_h;
    const Baseline m_base;
    const std::string m_context;
    std::vector<Option> m_options;
    std::set<std::string> m_proposed;
    ValidCache m_valid;
    PointSets m_done;
    std::map<std::string, int> m_searches; // local searches so far, by id without the count
    std::set<std::pair<std::string, Point>> m_centres;
};

// A catalogue idea as an option, its gain predicted from the model's best point.
Option &RoundPlan::consider(const IdeaDef &d, int tier)
{
    auto points = validPoints(d, m_t);
    Option o;
    o.estimate = d.estimate ? d.estimate(m_t, points.front()) : Estimate{};
    o.tier = tier;
    o.idea.id = d.id;
    o.idea.title = d.title;
    o.idea.text = d.text;
    o.idea.parentNode = m_base.best ? m_base.best->node : 0;
    o.idea.params = {{"idea", d.id}};
    // No idea beats the memory floor: near it, the gap left bounds what any idea can gain.
    const double floor = m_base.floor, relative = o.estimate.relative();
    const double predicted =
        std::max(floor, m_base.model ? m_base.ms * relative / m_base.model->relative() : floor * relative);
    o.gain = (m_base.best ? m_base.ms : m_ctx.eager ? m_ctx.eager->medianMs : floor) / predicted;
    m_options.push_back(std::move(o));
    m_proposed.insert(d.id);
    return m_options.back();
}

// A need that does not apply to this problem (an idea of another pattern) is no obstacle: an idea
// serving two patterns can build on a different idea in each.
bool RoundPlan::needsIn(const IdeaDef &d, const std::set<std::string> &known) const
{
    return std::all_of(d.needs.begin(), d.needs.end(), [&](const std::string &n) {
        const IdeaDef *need = findIdea(n);
        return known.count(n) > 0 || (need && !need->whyNot(m_t).empty());
    });
}

// With time to spare, an idea waits until its `after` steps that apply here have been tried.
bool RoundPlan::waitsForSteps(const IdeaDef &d) const
{
    if (m_ctx.secondsLeft && *m_ctx.secondsLeft < kLadderSeconds)
        return false;
    return std::any_of(d.after.begin(), d.after.end(), [&](const std::string &n) {
        const IdeaDef *step = findIdea(n);
        return step && !m_h.tried.count(n) && step->whyNot(m_t).empty();
    });
}

void RoundPlan::addFreshIdeas()
{
    const History &h = m_h;
    std::vector<const IdeaDef *> fresh;
    std::set<std::string> waiting; // fresh ideas, and those waiting for their steps
    for (const IdeaDef &d : catalogue())
        if (!h.tried.count(d.id) && d.whyNot(m_t).empty()) {
            waiting.insert(d.id);
            if (!waitsForSteps(d))
                fresh.push_back(&d);
        }
    for (const IdeaDef *d : fresh)
        if (needsIn(*d, h.established)) {
            Option &o = consider(*d, 0);
            o.idea.why = freshWhy(m_context, m_base, *d, o);
        }
    // An idea that builds on another waits for that one's measured kernel: each is then judged
    // against the time of what it builds on (the planner's model starts from a measurement, not
    // from an estimate of an estimate), and each step shows in the trajectory.
    std::set<std::string> known = h.established;
    // Nothing correct yet and the simple ideas failed: go on with what builds on them, rather
    // than stop with nothing.
    if (!m_base.best && m_options.empty()) {
        known.insert(h.tried.begin(), h.tried.end());
        for (const IdeaDef *d : fresh)
            if (needsIn(*d, known))
                consider(*d, 1).idea.why = triedWithout(m_context, failedNeeds(h, *d), *d);
    }

    // Once something is measured, ideas the model expects at under half the best's speed wait
    // until nothing else is left.
    if (m_base.best)
        for (Option &o : m_options)
            if (o.gain < 0.5)
                o.group = Slow;
    // Ideas whose needs will not get a correct kernel (they failed, or do not apply here) are tried
    // without them once nothing else is left.
    for (const IdeaDef *d : fresh) {
        if (m_proposed.count(d->id))
            continue;
        const bool blocked = std::any_of(d->needs.begin(), d->needs.end(), [&](const std::string &n) {
            if (h.established.count(n))
                return false;
            if (const IdeaDef *need = findIdea(n); need && !need->whyNot(m_t).empty())
                return false;
            return waiting.count(n) > 0;
        });
        if (blocked)
            continue;
        Option &o = consider(*d, 1);
        o.group = Slow;
        o.idea.why = triedWithout(m_context, unmetNeeds(h, m_t, *d), *d);
    }
}

// A local search around `centre`, unless one is already planned there or the idea is proposed
// afresh: its group by how far its next points lie and where it starts.
void RoundPlan::searchAround(const IdeaDef &def, const Point &centre, const KernelRecord *from, bool top)
{
    if (!m_centres.insert({def.id, centre}).second || m_proposed.count(def.id))
        return;
    const std::vector<Point> next = tuneFrom(def, centre, m_valid.of(def), m_done[def.id]);
    if (next.empty())
        return;
    Option o;
    o.def = &def;
    o.centre = centre;
    o.from = from;
    o.ring = ringOf(def, centre, next.front());
    o.fromMs = from ? measuredMs(*from) : 0;
    const bool near = o.ring.reach <= 1 && o.ring.changed <= 2;
    o.group = !from ? Slow : !near ? Wider : top ? Primary : NearBank;
    const std::string base = tuneId(def.id, centre);
    o.idea.id = tuneId(def.id, centre, m_searches[base] + 1);
    o.idea.title = def.title + (near ? ", neighbouring parameters" : ", wider parameter search");
    o.idea.parentNode = from ? from->node : 0;
    o.idea.params = {{"idea", def.id}, {"centre", pointJson(centre)}};
    const KernelHealth health = from ? kernelHealth(*from, m_ctx.problem, m_t.smemPerSm) : KernelHealth{};
    o.gain = health.spillBytes > 0 ? 1.25 : health.occupancy < 0.25 ? 1.12 : 1.02;
    o.total = m_valid.of(def).size();
    o.measured = m_done[def.id].size();
    o.start = searchStart(m_ctx, m_base, o, health);
    o.idea.text = searchText(def, centre);
    m_options.push_back(std::move(o));
}

// Around each kept kernel of a catalogue idea, its nearest points not generated yet, one ring
// wider each time the nearer ones are done; around the model's best point for an idea tried
// without a kept kernel.
void RoundPlan::addLocalSearches()
{
    const Target &t = m_t;
    m_done = replay(m_ctx, m_valid);
    for (const IdeaRecord &r : m_ctx.tried)
        if (isTuneId(r.ideaId))
            ++m_searches[r.ideaId.substr(0, r.ideaId.find(')', r.ideaId.find("~near(")) + 1)];
    std::set<std::string> topIdeas;
    for (const KernelRecord &k : m_ctx.topK)
        topIdeas.insert(ideaOf(k));
    for (const KernelRecord &k : m_ctx.topK)
        if (const IdeaDef *def = findIdea(ideaOf(k)); def && def->whyNot(t).empty())
            if (auto centre = validCentre(k, t, *def))
                searchAround(*def, *centre, &k, true);
    for (const KernelRecord &k : m_ctx.bank)
        if (const IdeaDef *def = findIdea(ideaOf(k)); def && !topIdeas.count(def->id) && def->whyNot(t).empty())
            if (auto centre = validCentre(k, t, *def))
                searchAround(*def, *centre, &k, false);
    // The rest of every tried idea's space, from the kernels above when they reach it, else from
    // the model's best point.
    for (const IdeaDef &d : catalogue()) {
        if (!m_h.tried.count(d.id) && !m_h.established.count(d.id))
            continue;
        if (!d.whyNot(t).empty() || m_valid.of(d).empty())
            continue;
        const bool open = std::any_of(m_options.begin(), m_options.end(), [&](const Option &o) { return o.def == &d; });
        if (open)
            continue;
        // The model's best point not generated yet, so the search starts where nothing is known.
        const std::set<Point> &gen = m_done[d.id];
        for (const Point &p : m_valid.of(d))
            if (!gen.count(p)) {
                searchAround(d, p, nullptr, false);
                break;
            }
    }
}

// The first `count` options in rank order not yet tried on their parent; each local search takes
// its points here, so two searches of one idea in a round share them out.
std::vector<Idea> RoundPlan::pick(int count)
{
    std::stable_sort(m_options.begin(), m_options.end(), ranksBefore);
    std::vector<Idea> out;
    PointSets claimed; // points given to local searches of this round
    for (Option &o : m_options) {
        if (int(out.size()) >= count)
            break;
        if (m_h.onParent.count({o.idea.parentNode, o.idea.id}))
            continue;
        if (o.def) {
            std::set<Point> skip = m_done[o.def->id];
            skip.insert(claimed[o.def->id].begin(), claimed[o.def->id].end());
            const std::vector<Point> points = tuneFrom(*o.def, o.centre, m_valid.of(*o.def), skip);
            if (points.empty())
                continue;
            nlohmann::json list = nlohmann::json::array();
            for (const Point &p : points) {
                claimed[o.def->id].insert(p);
                list.push_back(pointJson(p));
            }
            o.idea.params["points"] = std::move(list);
            o.idea.why = searchWhy(o, points);
        }
        out.push_back(std::move(o.idea));
    }
    return out;
}

} // namespace

std::string catalogueId(const std::string &ideaId) { return ideaId.substr(0, ideaId.find('~')); }

std::string tuneId(const std::string &catalogue, const Point &centre, int nth)
{
    return catalogue + "~near(" + pointText(centre) + ")" + (nth > 1 ? "~" + std::to_string(nth) : std::string());
}

bool isTuneId(const std::string &ideaId) { return ideaId.find("~near(") != std::string::npos; }

std::optional<Point> tuneCentre(const std::string &ideaId)
{
    const std::size_t open = ideaId.find("~near(");
    if (open == std::string::npos)
        return std::nullopt;
    const std::size_t close = ideaId.find(')', open);
    if (close == std::string::npos)
        return std::nullopt;
    const std::string inside = ideaId.substr(open + 6, close - open - 6);
    Point centre;
    for (std::size_t pos = 0; pos < inside.size();) {
        const std::size_t comma = inside.find(", ", pos), eq = inside.find('=', pos);
        if (eq == std::string::npos || (comma != std::string::npos && eq > comma))
            return std::nullopt;
        const std::size_t end = comma == std::string::npos ? inside.size() : comma;
        char *stop = nullptr;
        const std::string value = inside.substr(eq + 1, end - eq - 1);
        const long v = std::strtol(value.c_str(), &stop, 10);
        if (value.empty() || *stop)
            return std::nullopt;
        centre[inside.substr(pos, eq - pos)] = int(v);
        pos = end + 2;
    }
    if (centre.empty())
        return std::nullopt;
    return centre;
}

Ring ringOf(const IdeaDef &def, const Point &centre, const Point &p)
{
    Ring r;
    for (const ParamDim &d : def.space) {
        auto a = centre.find(d.name), b = p.find(d.name);
        if (a == centre.end() || b == p.end() || a->second == b->second)
            continue;
        const std::vector<int> sorted = sortedValues(d);
        const int steps = std::max(1, std::abs(position(sorted, a->second) - position(sorted, b->second)));
        ++r.changed;
        r.reach = std::max(r.reach, steps);
    }
    return r;
}

std::string ringText(const Ring &r)
{
    static const char *const counts[] = {"no", "one", "two", "three", "four", "five", "six"};
    const std::string n = r.changed < 7 ? counts[r.changed] : std::to_string(r.changed);
    if (r.changed == 0)
        return "the centre itself";
    const std::string what = n + (r.changed == 1 ? " parameter" : " parameters");
    if (r.reach <= 1)
        return what + (r.changed == 1 ? " moved to a neighbouring value" : " each moved to a neighbouring value");
    return what + " moved up to " + std::to_string(r.reach) + " values away";
}

std::vector<Point> nearPoints(const IdeaDef &def, const Target &t, const Point &centre)
{
    return nearFrom(def, centre, validPoints(def, t));
}

std::vector<Point> tunePoints(const IdeaDef &def, const Target &t, const Point &centre, const std::set<Point> &skip)
{
    return tuneFrom(def, centre, validPoints(def, t), skip);
}

std::vector<Point> pointsFor(const IdeaDef &def, const Target &t, const std::string &ideaId,
                             const nlohmann::json &params, const std::set<Point> &done)
{
    std::vector<Point> out;
    if (isTuneId(ideaId) && params.is_object() && params.contains("points") && params["points"].is_array()) {
        const std::vector<Point> valid = validPoints(def, t);
        for (const nlohmann::json &j : params["points"]) {
            Point p = pointFromJson(j);
            if (!done.count(p) && std::find(valid.begin(), valid.end(), p) != valid.end() &&
                std::find(out.begin(), out.end(), p) == out.end())
                out.push_back(std::move(p));
        }
        return out;
    }
    if (isTuneId(ideaId)) {
        std::optional<Point> centre;
        if (params.is_object() && params.contains("centre"))
            centre = pointFromJson(params["centre"]);
        else
            centre = tuneCentre(ideaId);
        return centre ? tunePoints(def, t, *centre, done) : out;
    }
    for (Point &p : validPoints(def, t))
        if (!done.count(p))
            out.push_back(std::move(p));
    return out;
}

PointSets generatedPoints(const GenContext &ctx, const Target &t)
{
    ValidCache valid(t);
    return replay(ctx, valid);
}

std::set<Point> generatedPoints(const GenContext &ctx, const Target &t, const std::string &catalogue)
{
    PointSets all = generatedPoints(ctx, t);
    return std::move(all[catalogue]);
}

KernelHealth kernelHealth(const KernelRecord &k, const Problem &problem, int smemPerSm)
{
    KernelHealth h;
    for (const auto &[name, r] : k.result.resources) {
        h.registers = std::max(h.registers, r.registers);
        h.spillBytes += r.spillStores + r.spillLoads;
    }
    auto cand = parseCandidate(k.source);
    if (!cand)
        return h;
    auto plan = resolveCandidate(*cand, problem);
    if (!plan)
        return h;
    for (const ResolvedLaunch &l : plan->launches) {
        auto it = k.result.resources.find(l.kernel);
        if (it == k.result.resources.end())
            continue;
        const int threads = int(l.block[0] * l.block[1] * l.block[2]);
        const int warps = (threads + 31) / 32;
        // Registers are allocated per warp in units of 256; an SM has 65536 registers, 64 warps,
        // 32 blocks and smemPerSm bytes of shared memory (1 KB of it reserved per block).
        const int regsPerWarp = ((std::max(it->second.registers, 1) * 32 + 255) / 256) * 256;
        int blocks = std::min({32, 65536 / (regsPerWarp * warps), 2048 / std::max(threads, 1)});
        const std::int64_t smem = it->second.sharedBytes + l.smem;
        if (smem > 0)
            blocks = std::min<int>(blocks, int(smemPerSm / (smem + 1024)));
        const double occupancy = double(blocks * warps) / 64.0;
        if (occupancy < h.occupancy) {
            h.occupancy = occupancy;
            h.threads = threads;
        }
    }
    if (h.spillBytes > 0)
        h.note = "spills " + std::to_string(h.spillBytes) + " bytes per thread to local memory";
    else if (h.occupancy < 0.25)
        h.note = "uses " + std::to_string(h.registers) + " registers per thread with " + std::to_string(h.threads) +
            "-thread blocks: " + fmt("%.0f%%", 100 * h.occupancy) + " occupancy";
    return h;
}

double memoryFloorMs(const GenContext &ctx)
{
    const double bytes = ctx.loaded.bytes > 0 ? ctx.loaded.bytes : ctx.problem.bytes();
    const double bw = ctx.ceilings.bandwidthGBs > 0 ? ctx.ceilings.bandwidthGBs : kAssumedBandwidthGBs;
    return bytes / (bw * 1e6);
}

std::vector<Idea> planIdeas(const GenContext &ctx, const Target &t, int count)
{
    RoundPlan plan(ctx, t);
    plan.addFreshIdeas();
    plan.addLocalSearches();
    return plan.pick(count);
}

} // namespace kf::builtin
