// Matrix products and convolutions with a tail (pattern.h): a product idea answers for every
// product of the pattern, and its candidate is one file of several stages. Each product is rendered alone with
// its point, writing its buffer; then the tail is rendered with the idea the cost model ranks first
// for it. Stages are wrapped in namespaces so that the templates' constants and helpers, which
// share names across templates, do not collide; kernels keep their names unless two would clash.
#include "gen/builtin/ideas.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <regex>
#include <set>

namespace kf::builtin::ideas {

namespace {

Target withGpuOf(Target made, const Target &t)
{
    made.smemPerBlock = t.smemPerBlock;
    made.smemPerSm = t.smemPerSm;
    return made;
}

Target tailTarget(const Target &t)
{
    return withGpuOf(makeTarget(*t.pattern.tail, *t.pattern.tailProblem, t.sms, t.major, t.policy), t);
}

struct Choice {
    const IdeaDef *idea = nullptr;
    Point point;
};

// The idea and point the cost model ranks first for a target, if any applies.
std::optional<Choice> bestIdea(const Target &t)
{
    std::optional<Choice> best;
    double bestCost = std::numeric_limits<double>::infinity();
    for (const IdeaDef &d : catalogue()) {
        if (!d.forKind(t.pattern.kind) || (d.applies && !d.applies(t).empty()))
            continue;
        auto points = validPoints(d, t);
        if (points.empty())
            continue;
        const double cost = d.estimate ? d.estimate(t, points.front()).relative() : 1.0;
        if (cost < bestCost)
            bestCost = cost, best = Choice{&d, points.front()};
    }
    return best;
}

// The names a stage defines for the whole file: its kernels (extern "C", so a namespace does not
// keep them apart) and its scratch buffers.
std::vector<std::string> fileWideNames(const std::string &text)
{
    static const std::regex kernel(
        R"(extern "C"\s+__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s+)?([A-Za-z_]\w*)\s*\()");
    static const std::regex scratch(R"(//\s*@scratch\s+([A-Za-z_]\w*))");
    std::vector<std::string> names;
    for (const std::regex *re : {&kernel, &scratch})
        for (auto it = std::sregex_iterator(text.begin(), text.end(), *re); it != std::sregex_iterator(); ++it)
            names.push_back((*it)[1]);
    return names;
}

// One stage of the file: its includes moved out (they cannot sit in a namespace), its @precision
// dropped after the first stage (the file has one: the products'), kernels and scratch buffers
// renamed where an earlier stage has one of the same name (every use of the word in the stage).
struct Stages {
    std::string includes, body;
    std::set<std::string> names;
    bool precision = false;

    void add(std::string text, const std::string &space)
    {
        const auto own = fileWideNames(text);
        std::set<std::string> taken(own.begin(), own.end());
        for (const std::string &k : own)
            if (!names.insert(k).second) {
                // A stage that is itself a chain already holds names with suffixes: the new name
                // must be free in the file and in this stage.
                std::string renamed = k + "_" + space;
                for (int i = 2; names.count(renamed) || taken.count(renamed); ++i)
                    renamed = k + "_" + space + std::to_string(i);
                text = std::regex_replace(text, std::regex("\\b" + k + "\\b"), renamed);
                names.insert(renamed);
                taken.insert(renamed);
            }
        std::string kept;
        std::size_t at = 0;
        while (at < text.size()) {
            std::size_t nl = text.find('\n', at);
            nl = nl == std::string::npos ? text.size() : nl + 1;
            const std::string line = text.substr(at, nl - at);
            at = nl;
            if (line.rfind("#include", 0) == 0) {
                if (includes.find(line) == std::string::npos)
                    includes += line;
            } else if (precision && line.find("// @precision") != std::string::npos) {
                continue;
            } else {
                kept += line;
            }
        }
        precision = true;
        body += "namespace " + space + " {\n" + kept + "} // namespace " + space + "\n\n";
        // The engine finds a kernel by its name at file scope.
        static const std::regex launch(R"(//\s*@launch\s+([A-Za-z_]\w*))");
        for (auto it = std::sregex_iterator(kept.begin(), kept.end(), launch); it != std::sregex_iterator(); ++it)
            usings += "using " + space + "::" + std::string((*it)[1]) + ";\n";
    }
    std::string text() const { return includes + (includes.empty() ? "" : "\n") + body + usings; }

private:
    std::string usings;
};

double bytesOf(const Target &t) { return t.inputBytes + t.paramBytes + t.outputBytes; }

// Row stages (norms and sums before a loss) each pass over the memory: the chain takes their sum,
// in units of the first stage's floor. Products and convolutions are compute-bound: the slowest
// stands for them.
Estimate chainEstimate(const std::function<Estimate(const Target &, const Point &)> &estimate, const Target &t,
                       const Point &p)
{
    const auto &stages = t.pattern.stages;
    const bool rows = std::none_of(stages.begin(), stages.end(), [](const auto &s) {
        return s->kind == PatternKind::Matmul || s->kind == PatternKind::Conv;
    });
    Estimate worst = estimate(productTarget(t, 0), p);
    const double first = bytesOf(productTarget(t, 0));
    double sum = worst.relative() * first;
    for (std::size_t i = 1; i < stages.size(); ++i) {
        const Target s = productTarget(t, i);
        const Estimate e = estimate(s, p);
        sum += e.relative() * bytesOf(s);
        if (e.relative() > worst.relative())
            worst = e;
    }
    if (rows && stages.size() > 1 && first > 0) {
        worst.traffic *= sum / first / worst.relative();
        worst.reads += ", in each of " + std::to_string(stages.size()) + " passes";
    }
    return worst;
}

} // namespace

Target productTarget(const Target &t, std::size_t i)
{
    return withGpuOf(makeTarget(*t.pattern.stages[i], *t.problem, t.sms, t.major, t.policy), t);
}

IdeaDef forProducts(IdeaDef d)
{
    auto applies = d.applies;
    d.applies = [applies](const Target &t) -> std::string {
        if (!t.pattern.tail)
            return applies ? applies(t) : std::string();
        for (std::size_t i = 0; applies && i < t.pattern.products.size(); ++i)
            if (std::string why = applies(productTarget(t, i)); !why.empty())
                return t.pattern.products.size() > 1 ? t.pattern.products[i] + ": " + why : why;
        if (!bestIdea(tailTarget(t)))
            return "no idea computes what follows the product (" + t.pattern.tail->summary() + ")";
        return {};
    };
    if (auto check = d.check)
        d.check = [check](const Target &t, const Point &p) -> std::string {
            if (!t.pattern.tail)
                return check(t, p);
            for (std::size_t i = 0; i < t.pattern.products.size(); ++i)
                if (std::string why = check(productTarget(t, i), p); !why.empty())
                    return why;
            return {};
        };
    if (auto estimate = d.estimate)
        d.estimate = [estimate](const Target &t, const Point &p) {
            return t.pattern.tail ? chainEstimate(estimate, t, p) : estimate(t, p);
        };
    return d;
}

Result<std::string> renderProducts(const IdeaDef &def, const Target &t, const Point &p)
{
    std::vector<std::pair<std::string, std::string>> stages;
    for (std::size_t i = 0; i < t.pattern.products.size(); ++i) {
        auto text = renderIdea(def, productTarget(t, i), p);
        if (!text)
            return text.error();
        stages.emplace_back("stage_" + t.pattern.products[i], std::move(*text));
    }
    return chainFile(t, stages, def.title);
}

Result<std::string> chainFile(const Target &t, const std::vector<std::pair<std::string, std::string>> &texts,
                              const std::string &title)
{
    const Pattern &pattern = t.pattern;
    Stages stages;
    std::string scratch, names;
    for (std::size_t i = 0; i < pattern.products.size(); ++i) {
        stages.names.insert(pattern.products[i]);
        scratch += "// @scratch " + pattern.products[i] + " float32 " +
            std::to_string(numel(pattern.stages[i]->outShape)) + " uninitialized\n";
        names += (names.empty() ? "" : ", ") + pattern.products[i];
    }
    for (const auto &[space, text] : texts)
        stages.add(text, space);
    const Target tail = tailTarget(t);
    const auto choice = bestIdea(tail);
    if (!choice)
        return makeError(ErrorCode::Unsupported, "no idea computes " + pattern.tail->summary());
    auto text = renderIdea(*choice->idea, tail, choice->point);
    if (!text)
        return text.error();
    stages.add(*text, "stage_tail");
    const std::string header = "// " + title + ", then " + choice->idea->title + "\n// Problem " +
        (t.problem ? t.problem->name : std::string()) + ": " + pattern.summary() +
        "\n//\n// The products are written whole to scratch buffers (" + names + "); then built-in idea " +
        choice->idea->id + " (" + pointText(choice->point) +
        ") computes the output from them. Each stage is a namespace of its own.\n" + scratch + "\n";
    return header + stages.text();
}

} // namespace kf::builtin::ideas
