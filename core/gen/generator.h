#pragma once
// The generator interface shared by the built-in generator and the LLM generators: propose ideas
// in plain language, implement an idea as candidate files, repair a candidate that failed.
#include "eval/protocol.h"
#include "problem/problem.h"
#include "util/error.h"

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kf {

// A candidate already evaluated, as generators see it.
struct KernelRecord {
    std::int64_t node = 0;       // id in the session
    std::string ideaId;          // the catalogue id or idea title that produced it
    std::string source;          // the candidate file
    EvalResult result;           // verdict, timing, resources, errors
    nlohmann::json params;       // the parameter point it was generated at (built-in), or null
};

// An idea tried earlier and how it did.
struct IdeaRecord {
    std::int64_t node = 0;
    int round = 0;
    std::string ideaId;          // stable key (catalogue id + parameters for the built-in generator)
    std::string title;
    std::string text;
    std::int64_t parentNode = 0; // the kernel it was applied to (0: from the reference)
    double bestMs = 0;           // best correct time among its candidates, 0 when none was correct
    int correct = 0, failed = 0;
    std::string failure;         // the most common failure reason, when none was correct
    std::vector<nlohmann::json> points; // parameters of its evaluated candidates (repairs included), when known
};

struct GenContext {
    Problem problem;
    LoadedProblem loaded;        // op graph with shapes, FLOPs, bytes
    GpuInfo gpu;
    Ceilings ceilings;
    std::optional<Timing> eager; // the eager baseline
    Policy policy = Policy::Strict;
    int round = 0;
    std::vector<KernelRecord> topK;  // the best correct kernels so far, fastest first
    std::vector<KernelRecord> bank;  // good kernels kept for seeding
    std::vector<IdeaRecord> tried;   // every idea so far, oldest first
    const std::atomic<bool> *cancel = nullptr;
};

struct Idea {
    std::string id;              // stable key; the search never repeats an id on the same parent
    std::string title;           // short ("Warp-shuffle row reduction")
    std::string text;            // the plain-language idea
    std::string why;             // which measurement or earlier result led to it
    std::int64_t parentNode = 0; // the kernel it builds on (0: from the reference)
    nlohmann::json params;       // generator-private (the built-in generator's parameter space)
};

struct Draft {
    std::string title;           // "block 256, 4 rows per block"
    std::string source;          // a complete candidate file (directives included)
    nlohmann::json params;
};

struct Usage {                   // what one call cost (LLM generators; zero for the built-in one)
    std::int64_t promptTokens = 0, completionTokens = 0, reasoningTokens = 0;
    double cost = 0;
};

class Generator {
public:
    virtual ~Generator() = default;
    virtual std::string name() const = 0;
    // Whether this generator can work on the problem; the error names the op that stops it.
    virtual Status supports(const GenContext &) const = 0;
    // Up to `count` ideas not yet tried on their parent, each with why it was chosen.
    virtual Result<std::vector<Idea>> proposeIdeas(const GenContext &, int count, Usage *usage = nullptr) = 0;
    // Up to `count` different implementations of one idea.
    virtual Result<std::vector<Draft>> implement(const GenContext &, const Idea &, int count, Usage *usage = nullptr) = 0;
    // A corrected candidate for one that failed to compile or verify, or nothing.
    virtual Result<std::optional<Draft>> repair(const GenContext &, const Idea &, const KernelRecord &failed,
                                                Usage *usage = nullptr) = 0;
};

} // namespace kf
