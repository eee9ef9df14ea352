#pragma once
// The catalogue of optimization ideas of the built-in generator. Each idea has a plain-language
// text, the patterns it applies to, the ideas it builds on, a parameter space, a cost model that
// ranks its parameter points, and a CUDA template (resources/templates/<id>.cu) whose placeholders
// it fills from the pattern and a parameter point. Ideas never name a problem: sizes come from the
// pattern, and every size a template fixes is a parameter.
#include "gen/builtin/pattern.h"
#include "gen/builtin/templates.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kf::builtin {

// One parameter point: BLOCK=256, VEC=4, ...
using Point = std::map<std::string, int>;
std::string pointText(const Point &); // "BLOCK=256, VEC=4"
nlohmann::json pointJson(const Point &);
Point pointFromJson(const nlohmann::json &); // ignores keys that are not integers

struct ParamDim {
    std::string name;        // placeholder name in the template
    std::vector<int> values; // the preferred value first
    std::string meaning;     // "threads per block"
};

// What an idea is applied to: the pattern, its problem, and the GPU.
// An H200's shared memory (bytes), for a target whose GPU is not known.
inline constexpr int kDefaultSmemPerBlock = 232448, kDefaultSmemPerSm = 233472;

struct Target {
    Pattern pattern;
    const Problem *problem = nullptr;
    int sms = 132;         // streaming multiprocessors (an H200's when the GPU is unknown)
    int major = 9;         // compute capability major (9: Hopper, thread-block clusters)
    double inputBytes = 0; // the tensors the computation reads (leaves of the input or program)
    double paramBytes = 0; // LayerNorm/RMSNorm weight and bias
    double outputBytes = 0;
    Policy policy = Policy::Strict; // the search's accuracy policy: loose admits TF32 and FP16 products
    // Shared memory, as the worker measured it on the GPU (an H200's when the GPU is unknown):
    // the most one block may opt in to, and what an SM holds for all its blocks.
    int smemPerBlock = kDefaultSmemPerBlock;
    int smemPerSm = kDefaultSmemPerSm;
};
Target makeTarget(const Pattern &, const Problem &, int sms, int major, Policy policy = Policy::Strict);

// The cost model: time ~ memory floor x traffic / (busy x efficiency).
struct Estimate {
    double traffic = 1;      // DRAM bytes over the problem's minimum (each tensor read once, written once)
    double busy = 1;         // fraction of the GPU the grid keeps busy, (0, 1]
    double efficiency = 0.8; // fraction of copy bandwidth this access pattern reaches when busy
    std::string reads;       // how it touches memory: "reads each row three times"
    std::string grid;        // how it uses the GPU: "16 blocks of 1024 threads"
    double relative() const; // the time in units of the memory floor
};

struct IdeaDef {
    std::string id;
    std::string title;
    std::string text; // the plain-language idea
    std::vector<PatternKind> patterns;
    std::vector<std::string> needs = {}; // ideas it builds on (all of them)
    // Ideas a search with time to spare measures first (kLadderSeconds, planner.h): each step then
    // shows in the trajectory, and this idea is judged against a measured kernel of the step below
    // it. A short search proposes it at once. A step that does not apply, or failed, is no wait.
    std::vector<std::string> after = {};
    std::vector<ParamDim> space;
    std::vector<std::string> repairOrder; // dims to change first when a point compiles but fails
    // "" when the idea applies to the target, else why not ("rows fit in registers already").
    std::function<std::string(const Target &)> applies = nullptr;
    // "" when the point is valid for the target, else why not ("65536 is not a multiple of 48").
    std::function<std::string(const Target &, const Point &)> check = nullptr;
    std::function<Estimate(const Target &, const Point &)> estimate;
    // The template's placeholders beyond the common ones (IDEA, TITLE, PARAMS, PROBLEM, SUMMARY,
    // OUT and each parameter by name).
    std::function<TemplateValues(const Target &, const Point &)> values;
    // The template file (resources/templates/NAME.cu) when ideas share one; empty: the id.
    std::string templateName = {};
    // An idea that renders the whole candidate itself, a chain's stages and tail included (one
    // kernel for several stages); others render a chain stage by stage (catalogue_products.cpp).
    std::function<Result<std::string>(const IdeaDef &, const Target &, const Point &)> render = nullptr;

    const std::string &templateId() const { return templateName.empty() ? id : templateName; }
    bool forKind(PatternKind) const;
    std::string whyNot(const Target &) const; // "" when it applies (kind, applies, a valid point)
};

const std::vector<IdeaDef> &catalogue();
const IdeaDef *findIdea(std::string_view id);

// Every valid point of the idea's space for the target, best first by the cost model, ties broken
// by the order of preference of each dimension's values.
std::vector<Point> validPoints(const IdeaDef &, const Target &);

// The complete candidate file for one point.
Result<std::string> renderIdea(const IdeaDef &, const Target &, const Point &);
// The idea's own template filled for one point (what renderIdea gives for a pattern without a tail).
Result<std::string> renderTemplateOf(const IdeaDef &, const Target &, const Point &);

} // namespace kf::builtin
