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
    if (!def || !def->estimate) return std::nullopt;
    Point p = pointFromJson(k.params);
    for (const ParamDim &d : def->space)
        if (!p.count(d.name)) return std::nullopt;
    if (def->check && !def->check(t, p).empty()) return std::nullopt;
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
        if (!isTuneId(r.ideaId)) h.tried.insert(catalogueId(r.ideaId));
        if (r.correct > 0) h.established.insert(catalogueId(r.ideaId));
        else if (!r.failure.empty()) h.failure[catalogueId(r.ideaId)] = r.failure;
    }
    for (const auto *list : {&ctx.topK, &ctx.bank})
        for (const KernelRecord &k : *list)
            if (k.result.verdict == Verdict::Correct) h.established.insert(ideaOf(k));
    return h;
}

// Points at `distance` from `centre` (dims that differ), best first.
std::vector<Point> neighbours(const IdeaDef &def, const Target &t, const Point &centre, int distance)
{
    std::vector<Point> out;
    for (Point &p : validPoints(def, t)) {
        int differ = 0;
        for (const auto &[k, v] : p) differ += centre.count(k) && centre.at(k) != v ? 1 : 0;
        if (differ == distance) out.push_back(std::move(p));
    }
    return out;
}

struct Option {
    Idea idea;
    double gain = 1; // expected speedup over the best so far (or the eager baseline)
    int tier = 0;    // 0: needs satisfied; 1: builds on an idea proposed in the same round
};

} // namespace

std::string catalogueId(const std::string &ideaId) { return ideaId.substr(0, ideaId.find('~')); }

std::string tuneId(const std::string &catalogue, const Point &centre)
{
    return catalogue + "~near(" + pointText(centre) + ")";
}

bool isTuneId(const std::string &ideaId) { return ideaId.find("~near(") != std::string::npos; }

std::vector<Point> nearPoints(const IdeaDef &def, const Target &t, const Point &centre)
{
    std::vector<Point> out = neighbours(def, t, centre, 1);
    for (Point &p : neighbours(def, t, centre, 2)) out.push_back(std::move(p));
    return out;
}

std::vector<Point> pointsFor(const IdeaDef &def, const Target &t, const std::string &ideaId, const nlohmann::json &params)
{
    if (isTuneId(ideaId) && params.is_object() && params.contains("centre"))
        return nearPoints(def, t, pointFromJson(params["centre"]));
    return validPoints(def, t);
}

std::set<Point> generatedPoints(const GenContext &ctx, const Target &t, const std::string &catalogue)
{
    std::set<Point> done;
    auto kept = [&] {
        for (const auto *list : {&ctx.topK, &ctx.bank})
            for (const KernelRecord &k : *list)
                if (ideaOf(k) == catalogue) done.insert(pointFromJson(k.params));
        return done;
    };
    const IdeaDef *def = findIdea(catalogue);
    if (!def) return kept();
    // Replay history first: each idea skipped what earlier ones drew, not what is kept now.
    for (const IdeaRecord &r : ctx.tried) {
        if (catalogueId(r.ideaId) != catalogue) continue;
        nlohmann::json params;
        if (isTuneId(r.ideaId)) {
            // The centre is spelled in the id: "idea~near(BLOCK=512, VEC=4)".
            Point centre;
            std::string inside = r.ideaId.substr(r.ideaId.find("~near(") + 6);
            inside = inside.substr(0, inside.rfind(')'));
            for (std::size_t pos = 0; pos < inside.size();) {
                std::size_t comma = inside.find(", ", pos), eq = inside.find('=', pos);
                if (eq == std::string::npos) break;
                std::size_t end = comma == std::string::npos ? inside.size() : comma;
                centre[inside.substr(pos, eq - pos)] = std::atoi(inside.substr(eq + 1, end - eq - 1).c_str());
                pos = end + 2;
            }
            params = {{"centre", pointJson(centre)}};
        }
        int left = r.correct + r.failed;
        for (const Point &p : pointsFor(*def, t, r.ideaId, params)) {
            if (left <= 0) break;
            if (done.insert(p).second) --left;
        }
    }
    return kept();
}

KernelHealth kernelHealth(const KernelRecord &k, const Problem &problem)
{
    KernelHealth h;
    for (const auto &[name, r] : k.result.resources) {
        h.registers = std::max(h.registers, r.registers);
        h.spillBytes += r.spillStores + r.spillLoads;
    }
    auto cand = parseCandidate(k.source);
    if (!cand) return h;
    auto plan = resolveCandidate(*cand, problem);
    if (!plan) return h;
    for (const ResolvedLaunch &l : plan->launches) {
        auto it = k.result.resources.find(l.kernel);
        if (it == k.result.resources.end()) continue;
        const int threads = int(l.block[0] * l.block[1] * l.block[2]);
        const int warps = (threads + 31) / 32;
        // Registers are allocated per warp in units of 256; an SM has 65536 registers, 64 warps,
        // 32 blocks and about 228 KB of shared memory (1 KB of it reserved per block).
        const int regsPerWarp = ((std::max(it->second.registers, 1) * 32 + 255) / 256) * 256;
        int blocks = std::min({32, 65536 / (regsPerWarp * warps), 2048 / std::max(threads, 1)});
        const std::int64_t smem = it->second.sharedBytes + l.smem;
        if (smem > 0) blocks = std::min<int>(blocks, int(233472 / (smem + 1024)));
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
    const double floor = memoryFloorMs(ctx);
    const History h = history(ctx);
    const KernelRecord *best = nullptr;
    for (const KernelRecord &k : ctx.topK)
        if (k.result.verdict == Verdict::Correct && measuredMs(k) > 0) {
            best = &k;
            break;
        }

    // Where the gain is measured from: the best kernel (scaled by how far the model is off for
    // it), else the eager baseline.
    std::optional<Estimate> bestModel = best ? modelOf(*best, t) : std::nullopt;
    const double bestMs = best ? measuredMs(*best) : 0;
    std::string context;
    if (best) {
        const KernelHealth health = kernelHealth(*best, ctx.problem);
        context = "best so far is " + ideaOf(*best) + (best->params.is_object() ? " (" + pointText(pointFromJson(best->params)) + ")" : "") +
                  " at " + ms(bestMs) + ", " + times(bestMs / floor) + " the memory floor of " + ms(floor);
        if (bestModel) context += ": it " + bestModel->reads + " (" + bestModel->grid + ")";
        if (!health.note.empty()) context += "; it " + health.note;
    } else {
        context = "nothing measured yet; the memory floor is " + ms(floor);
        if (ctx.eager) context += " and eager PyTorch takes " + ms(ctx.eager->medianMs);
    }

    std::vector<Option> options;
    std::set<std::string> proposed;
    auto consider = [&](const IdeaDef &d, int tier) {
        auto points = validPoints(d, t);
        const Estimate e = d.estimate ? d.estimate(t, points.front()) : Estimate{};
        Option o;
        o.tier = tier;
        o.idea.id = d.id;
        o.idea.title = d.title;
        o.idea.text = d.text;
        o.idea.parentNode = best ? best->node : 0;
        o.idea.params = {{"idea", d.id}};
        // No idea beats the memory floor: near it, the gap left bounds what any idea can gain.
        const double predicted =
            std::max(floor, bestModel ? bestMs * e.relative() / bestModel->relative() : floor * e.relative());
        o.gain = (best ? bestMs : ctx.eager ? ctx.eager->medianMs : floor) / predicted;
        std::string why = context + ". " + d.title + ": it " + e.reads + " (" + e.grid + ")";
        if (best) why += "; the model expects " + times(o.gain) + " the speed";
        else if (d.needs.empty()) why += "; the simplest correct kernel for this pattern, to measure against";
        if (tier == 1) {
            std::string on;
            for (const auto &n : d.needs) on += (on.empty() ? "" : ", ") + n;
            why += "; it builds on " + on + ", proposed in the same round";
        }
        o.idea.why = why;
        options.push_back(std::move(o));
        proposed.insert(d.id);
    };

    std::vector<const IdeaDef *> fresh;
    for (const IdeaDef &d : catalogue())
        if (!h.tried.count(d.id) && d.whyNot(t).empty()) fresh.push_back(&d);
    auto needsIn = [](const IdeaDef &d, const std::set<std::string> &known) {
        return std::all_of(d.needs.begin(), d.needs.end(), [&](const std::string &n) { return known.count(n) > 0; });
    };
    for (const IdeaDef *d : fresh)
        if (needsIn(*d, h.established)) consider(*d, 0);
    std::set<std::string> known = h.established;
    known.insert(proposed.begin(), proposed.end());
    for (const IdeaDef *d : fresh)
        if (!proposed.count(d->id) && needsIn(*d, known)) consider(*d, 1);
    // Nothing correct yet and the simple ideas failed: go on with what builds on them, rather
    // than stop with nothing.
    if (!best && options.empty()) {
        known.insert(h.tried.begin(), h.tried.end());
        for (const IdeaDef *d : fresh)
            if (needsIn(*d, known)) {
                consider(*d, 1);
                std::string failed;
                for (const auto &n : d->needs)
                    if (!h.established.count(n))
                        failed += (failed.empty() ? "" : "; ") + n + " failed" +
                                  (h.failure.count(n) ? " (" + h.failure.at(n) + ")" : std::string());
                options.back().idea.why = context + ". " + failed + ", so " + d->id + " is tried without it";
            }
    }

    // Local searches around the best kernels' parameter points, worth more when the resources
    // say the point is a poor fit (spills, low occupancy).
    std::set<std::string> tuned;
    for (std::size_t i = 0; i < ctx.topK.size() && i < 3; ++i) {
        const KernelRecord &k = ctx.topK[i];
        const IdeaDef *def = findIdea(ideaOf(k));
        const Point centre = pointFromJson(k.params);
        // One local search per idea, around its fastest kernel, and only near the best time.
        if (!def || centre.empty() || k.result.verdict != Verdict::Correct || tuned.count(def->id) ||
            measuredMs(k) > 1.5 * bestMs)
            continue;
        tuned.insert(def->id);
        const std::string id = tuneId(def->id, centre);
        if (h.onParent.count({k.node, id})) continue;
        const std::set<Point> done = generatedPoints(ctx, t, def->id);
        const auto near = nearPoints(*def, t, centre);
        if (std::all_of(near.begin(), near.end(), [&](const Point &p) { return done.count(p) > 0; })) continue;
        const KernelHealth health = kernelHealth(k, ctx.problem);
        Option o;
        o.idea.id = id;
        o.idea.title = def->title + ", neighbouring parameters";
        o.idea.text = "Try the parameter points next to " + pointText(centre) + " for " + def->id +
                      ", one value changed at a time: the cost model ranks them, the GPU decides.";
        o.idea.parentNode = k.node;
        o.idea.params = {{"idea", def->id}, {"centre", pointJson(centre)}};
        o.gain = health.spillBytes > 0 ? 1.25 : health.occupancy < 0.25 ? 1.12 : 1.02;
        o.idea.why = ideaOf(k) + " at " + pointText(centre) + " measured " + ms(measuredMs(k)) + ", " +
                     times(measuredMs(k) / floor) + " the memory floor" +
                     (health.note.empty() ? "" : "; it " + health.note) +
                     "; its neighbouring parameter points may fit this GPU better";
        options.push_back(std::move(o));
    }

    std::stable_sort(options.begin(), options.end(), [](const Option &a, const Option &b) {
        if (a.tier != b.tier) return a.tier < b.tier;
        return a.gain > b.gain;
    });
    // Once something is measured, ideas the model expects at under half the best's speed only run
    // when nothing else is left.
    const bool others = std::any_of(options.begin(), options.end(), [](const Option &o) { return o.gain >= 0.5; });
    if (best && others)
        options.erase(std::remove_if(options.begin(), options.end(), [](const Option &o) { return o.gain < 0.5; }),
                      options.end());
    std::vector<Idea> out;
    for (Option &o : options) {
        if (int(out.size()) >= count) break;
        if (h.onParent.count({o.idea.parentNode, o.idea.id})) continue;
        out.push_back(std::move(o.idea));
    }
    return out;
}

} // namespace kf::builtin
