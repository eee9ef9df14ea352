#include "gen/builtin/builtin_generator.h"

#include "gen/builtin/catalogue.h"
#include "gen/builtin/pattern.h"
#include "gen/builtin/planner.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace kf::builtin {

namespace {

std::string kindText(PatternKind k)
{
    switch (k) {
    case PatternKind::Elementwise:
        return "elementwise chains";
    case PatternKind::Reduce:
        return "reductions";
    case PatternKind::Softmax:
        return "softmax";
    case PatternKind::LayerNorm:
        return "layer norms";
    case PatternKind::RMSNorm:
        return "RMS norms";
    case PatternKind::Matmul:
        return "matrix products";
    case PatternKind::Conv:
        return "convolutions";
    case PatternKind::Pool:
        return "pooling";
    case PatternKind::Normalize:
        return "normalisations by a reduction";
    case PatternKind::Scan:
        return "cumulative sums and products";
    }
    return "this pattern";
}

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

Result<Draft> draft(const IdeaDef &def, const Target &t, const Point &p, const std::string &note = {})
{
    auto source = renderIdea(def, t, p);
    if (!source)
        return source.error();
    nlohmann::json params = pointJson(p);
    params["idea"] = def.id;
    return Draft{pointText(p) + note, *source, params};
}

// The parameter that most likely caused a failure: resources for compile and launch errors that
// name them, the idea's repair order for wrong results. Empty when parameters cannot help (a
// syntax error in the template is not fixed by a smaller block).
std::string failingDimension(const IdeaDef &def, const Point &point, const EvalResult &r)
{
    auto has = [&](const std::string &d) { return point.count(d) > 0; };
    auto first = [&](std::initializer_list<const char *> dims) -> std::string {
        for (const char *d : dims)
            if (has(d))
                return d;
        return {};
    };
    const std::string text = lower(r.reason + "\n" + r.compileLog);
    const bool resources = text.find("too many resources") != std::string::npos ||
        text.find("register") != std::string::npos || text.find("spill") != std::string::npos ||
        text.find("shared data") != std::string::npos || text.find("shared memory") != std::string::npos;
    switch (r.verdict) {
    case Verdict::CompileError:
        return resources ? first({"ELEMS", "UNROLL", "BLOCK", "CLUSTER"}) : std::string();
    case Verdict::LaunchError:
        if (text.find("cluster") != std::string::npos && has("CLUSTER"))
            return "CLUSTER";
        if (resources)
            return first({"ELEMS", "BLOCK", "UNROLL", "CLUSTER", "WARPS"});
        return first({"BLOCK", "WARPS", "CLUSTER"});
    case Verdict::Wrong:
    case Verdict::Racy:
    case Verdict::Sanitizer:
    case Verdict::Crashed:
    case Verdict::TimedOut:
        for (const std::string &d : def.repairOrder)
            if (has(d))
                return d;
        return {};
    default:
        return {};
    }
}

class BuiltinGenerator final : public Generator {
public:
    std::string name() const override { return "builtin"; }

    Status supports(const GenContext &ctx) const override
    {
        auto t = target(ctx);
        if (!t)
            return t.error();
        std::string reasons;
        bool any = false;
        for (const IdeaDef &d : catalogue()) {
            if (!d.forKind(t->pattern.kind))
                continue;
            any = true;
            std::string why = d.whyNot(*t);
            if (why.empty())
                return Ok{};
            reasons += (reasons.empty() ? "" : "; ") + d.id + ": " + why;
        }
        const std::string op = t->pattern.anchor.empty() ? "elementwise ops" : t->pattern.anchor;
        if (!any)
            return makeError(ErrorCode::Unsupported,
                             "the built-in catalogue has no ideas for " + kindText(t->pattern.kind) + " yet (" + op +
                                 "); use an LLM generator for this problem");
        return makeError(ErrorCode::Unsupported,
                         "no built-in idea fits this " + kindText(t->pattern.kind) + " problem (" + reasons +
                             "); use an LLM generator for this problem");
    }

    Result<std::vector<Idea>> proposeIdeas(const GenContext &ctx, int count, Usage *) override
    {
        auto t = target(ctx);
        if (!t)
            return t.error();
        return planIdeas(ctx, *t, count);
    }

    Result<std::vector<Draft>> implement(const GenContext &ctx, const Idea &idea, int count, Usage *) override
    {
        auto t = target(ctx);
        if (!t)
            return t.error();
        const IdeaDef *def = findIdea(catalogueId(idea.id));
        if (!def)
            return makeError(ErrorCode::Generator, "the built-in catalogue has no idea '" + idea.id + "'");
        // Never a point generated before in the session: a local search draws what the planner
        // gave it, a catalogue idea the best points of its space not generated yet.
        const std::set<Point> done = generatedPoints(ctx, *t, def->id);
        std::vector<Draft> out;
        for (const Point &p : pointsFor(*def, *t, idea.id, idea.params, done)) {
            if (int(out.size()) >= count)
                break;
            auto d = draft(*def, *t, p);
            if (!d)
                return d.error();
            out.push_back(std::move(*d));
        }
        return out;
    }

    Result<std::optional<Draft>> repair(const GenContext &ctx, const Idea &idea, const KernelRecord &failed,
                                        Usage *) override
    {
        auto t = target(ctx);
        if (!t)
            return t.error();
        std::string id =
            failed.params.is_object() && failed.params.contains("idea") && failed.params["idea"].is_string()
            ? failed.params["idea"].get<std::string>()
            : catalogueId(idea.id);
        const IdeaDef *def = findIdea(id);
        if (!def)
            return std::optional<Draft>{};
        const Point bad = pointFromJson(failed.params);
        const std::string dim = failingDimension(*def, bad, failed.result);
        if (dim.empty())
            return std::optional<Draft>{};
        const std::set<Point> done = generatedPoints(ctx, *t, def->id);
        // Prefer points that change only the failing dim; for resource failures, smaller values.
        const bool resources =
            failed.result.verdict == Verdict::CompileError || failed.result.verdict == Verdict::LaunchError;
        std::vector<Point> ranked;
        for (int pass = 0; pass < 2 && ranked.empty(); ++pass)
            for (const Point &p : validPoints(*def, *t)) {
                if (p == bad || done.count(p) || !p.count(dim) || p.at(dim) == bad.at(dim))
                    continue;
                if (resources && p.at(dim) > bad.at(dim))
                    continue;
                bool othersKept = true;
                for (const auto &[k, v] : p)
                    if (k != dim && bad.count(k) && bad.at(k) != v)
                        othersKept = false;
                if (pass == 0 && !othersKept)
                    continue;
                ranked.push_back(p);
            }
        if (ranked.empty())
            return std::optional<Draft>{};
        auto d =
            draft(*def, *t, ranked.front(), " (" + dim + " changed after: " + toString(failed.result.verdict) + ")");
        if (!d)
            return d.error();
        return std::optional<Draft>{std::move(*d)};
    }

private:
    Result<Target> target(const GenContext &ctx) const
    {
        auto pattern = recognise(ctx.loaded.graph, ctx.problem);
        if (!pattern)
            return pattern.error();
        Target t = makeTarget(*pattern, ctx.problem, ctx.gpu.present ? ctx.gpu.sms : 0,
                              ctx.gpu.present ? ctx.gpu.major : 0, ctx.policy);
        if (ctx.gpu.present && ctx.gpu.smemPerBlockOptin > 0)
            t.smemPerBlock = int(ctx.gpu.smemPerBlockOptin);
        if (ctx.gpu.present && ctx.gpu.smemPerSm > 0)
            t.smemPerSm = int(ctx.gpu.smemPerSm);
        return t;
    }
};

} // namespace

std::shared_ptr<Generator> makeBuiltinGenerator() { return std::make_shared<BuiltinGenerator>(); }

} // namespace kf::builtin
