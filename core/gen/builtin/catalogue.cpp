#include "gen/builtin/catalogue.h"

#include "gen/builtin/ideas.h"

#include <algorithm>
#include <cmath>

namespace kf::builtin {

std::string pointText(const Point &p)
{
    std::string s;
    for (const auto &[k, v] : p)
        s += (s.empty() ? "" : ", ") + k + "=" + std::to_string(v);
    return s;
}

nlohmann::json pointJson(const Point &p)
{
    nlohmann::json j = nlohmann::json::object();
    for (const auto &[k, v] : p)
        j[k] = v;
    return j;
}

Point pointFromJson(const nlohmann::json &j)
{
    Point p;
    if (!j.is_object())
        return p;
    for (const auto &[k, v] : j.items())
        if (v.is_number_integer())
            p[k] = v.get<int>();
    return p;
}

Target makeTarget(const Pattern &pattern, const Problem &problem, int sms, int major, Policy policy)
{
    Target t;
    t.pattern = pattern;
    t.problem = &problem;
    t.sms = sms > 0 ? sms : 132;
    t.major = major > 0 ? major : 9;
    t.policy = policy;
    const EwProgram &reads = pattern.kind == PatternKind::Elementwise ? pattern.program : pattern.input;
    for (const Leaf &l : reads.leaves)
        t.inputBytes += l.isMask() ? 0.0 : double(numel(l.shape)) * double(elementSize(l.dtype));
    for (const std::string &name : {pattern.weight, pattern.bias})
        if (const TensorSpec *s = name.empty() ? nullptr : problem.tensor(name))
            t.paramBytes += double(s->bytes());
    t.outputBytes = double(numel(pattern.outShape)) * double(elementSize(pattern.outDtype));
    return t;
}

double Estimate::relative() const { return traffic / (std::max(busy, 1e-3) * std::max(efficiency, 1e-3)); }

bool IdeaDef::forKind(PatternKind k) const { return std::find(patterns.begin(), patterns.end(), k) != patterns.end(); }

std::string IdeaDef::whyNot(const Target &t) const
{
    if (!forKind(t.pattern.kind))
        return "it is not for " + toString(t.pattern.kind) + " problems";
    if (applies) {
        std::string why = applies(t);
        if (!why.empty())
            return why;
    }
    if (validPoints(*this, t).empty())
        return "no point of its parameter space fits this problem's sizes";
    return {};
}

const std::vector<IdeaDef> &catalogue()
{
    static const std::vector<IdeaDef> all = [] {
        std::vector<IdeaDef> v;
        ideas::addElementwise(v);
        ideas::addReduce(v);
        ideas::addReduceFused(v);
        ideas::addSoftmax(v);
        ideas::addNorm(v);
        ideas::addGemm(v);
        ideas::addGemv(v);
        ideas::addConv(v);
        ideas::addConvDirect(v);
        ideas::addConvImage(v);
        ideas::addConvSlab(v);
        ideas::addPool(v);
        ideas::addNormalize(v);
        ideas::addScan(v);
        // Any pattern may be the first stage of a chain (a product, a convolution, a row op).
        for (IdeaDef &d : v)
            if (!d.render)
                d = ideas::forProducts(std::move(d));
        return v;
    }();
    return all;
}

const IdeaDef *findIdea(std::string_view id)
{
    for (const IdeaDef &d : catalogue())
        if (d.id == id)
            return &d;
    return nullptr;
}

std::vector<Point> validPoints(const IdeaDef &def, const Target &t)
{
    struct Ranked {
        Point point;
        double cost;
        int preference; // sum of each value's position in its dimension's list
    };
    std::vector<Ranked> ranked;
    const std::size_t dims = def.space.size();
    std::vector<std::size_t> at(dims, 0); // an odometer over the cartesian product
    for (bool more = true; more;) {
        Point p;
        int preference = 0;
        for (std::size_t d = 0; d < dims; ++d) {
            p[def.space[d].name] = def.space[d].values[at[d]];
            preference += int(at[d]);
        }
        if (!def.check || def.check(t, p).empty())
            ranked.push_back({p, def.estimate ? def.estimate(t, p).relative() : 1.0, preference});
        more = false;
        for (std::size_t d = dims; d-- > 0;) {
            if (++at[d] < def.space[d].values.size()) {
                more = true;
                break;
            }
            at[d] = 0;
        }
    }
    // Costs within 1% count as equal, so the preference order decides between them.
    std::stable_sort(ranked.begin(), ranked.end(), [](const Ranked &a, const Ranked &b) {
        if (std::abs(a.cost - b.cost) > 0.01 * std::min(a.cost, b.cost))
            return a.cost < b.cost;
        return a.preference < b.preference;
    });
    std::vector<Point> out;
    for (auto &r : ranked)
        out.push_back(std::move(r.point));
    return out;
}

Result<std::string> renderIdea(const IdeaDef &def, const Target &t, const Point &p)
{
    if (def.render)
        return def.render(def, t, p);
    if (t.pattern.tail)
        return ideas::renderProducts(def, t, p);
    return renderTemplateOf(def, t, p);
}

Result<std::string> renderTemplateOf(const IdeaDef &def, const Target &t, const Point &p)
{
    auto text = loadTemplate(def.templateId());
    if (!text)
        return text.error();
    TemplateValues v = def.values ? def.values(t, p) : TemplateValues{};
    v["IDEA"] = def.id;
    v["TITLE"] = def.title;
    v["PARAMS"] = pointText(p);
    v["PROBLEM"] = t.problem ? t.problem->name : "";
    v["SUMMARY"] = t.pattern.summary();
    v["OUT"] = t.pattern.output;
    v["SMEM_PER_BLOCK"] = std::to_string(t.smemPerBlock);
    v["SMEM_PER_SM"] = std::to_string(t.smemPerSm);
    for (const auto &[k, val] : p)
        v[k] = std::to_string(val);
    return renderTemplate(*text, v, "resources/templates/" + def.templateId() + ".cu");
}

} // namespace kf::builtin
