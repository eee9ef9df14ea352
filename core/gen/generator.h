#pragma once
// The generator interface shared by the built-in generator and the LLM generators: propose ideas
// in plain language, implement an idea as candidate files, repair a candidate that failed.
#include "eval/protocol.h"
#include "problem/problem.h"
#include "util/error.h"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kf {

// A candidate already evaluated, as generators see it.
struct KernelRecord {
    std::int64_t node = 0; // id in the session
    std::string ideaId;    // the catalogue id or idea title that produced it
    std::string source;    // the candidate file
    EvalResult result;     // verdict, timing, resources, errors
    nlohmann::json params; // the parameter point it was generated at (built-in), or null
};

// An idea tried earlier and how it did.
struct IdeaRecord {
    std::int64_t node = 0;
    int round = 0;
    std::string ideaId; // stable key (catalogue id + parameters for the built-in generator)
    std::string title;
    std::string text;
    std::int64_t parentNode = 0; // the kernel it was applied to (0: from the reference)
    double bestMs = 0;           // best correct time among its candidates, 0 when none was correct
    int correct = 0, failed = 0;
    int unjudged = 0;                   // compiled but not evaluated (a compile-only search, no GPU)
    std::string failure;                // the most common failure reason, when none was correct
    std::vector<nlohmann::json> points; // parameters of its evaluated candidates (repairs included), when known
};

struct Usage { // what one call cost (LLM generators; zero for the built-in one)
    std::int64_t promptTokens = 0, completionTokens = 0, reasoningTokens = 0;
    double cost = 0;
    std::int64_t tokens() const { return promptTokens + completionTokens; } // reasoning is part of completion
    Usage &operator+=(const Usage &u)
    {
        promptTokens += u.promptTokens;
        completionTokens += u.completionTokens;
        reasoningTokens += u.reasoningTokens;
        cost += u.cost;
        return *this;
    }
};

// One request to a language model and its answer, as the session keeps it so that a person can
// read the exact prompt and answer behind an idea or a candidate. Never holds an API key.
struct Exchange {
    std::string purpose;   // "ideas", "implement", "repair"
    std::int64_t node = 0; // the node it was made for: the idea (implement), the failed candidate (repair); 0: none yet
    std::string model;
    std::string endpoint;   // the URL posted to
    std::string request;    // the request body as sent (JSON)
    std::string prompt;     // the user message, for reading
    std::string response;   // the response body as received (or what arrived of it)
    std::string answer;     // the answer's text (thinking excluded)
    std::string reasoning;  // the model's visible thinking, when it returns one
    std::string error;      // empty when the answer was usable; else why not, for people
    std::string stopReason; // why the model stopped, as the server said it ("stop", "length", "end_turn", "refusal")
    std::string ending;     // "complete", "truncated" (cut at a limit), "refused"; "" when no answer came
    int httpStatus = 0;     // 0: no HTTP answer (no server, time-out, dropped connection)
    int attempts = 0;       // 1 + retries
    double latencyMs = 0;   // from the first attempt to the answer
    Usage usage;
};

// Stores an exchange as soon as it ends and returns its id in the session (0 when not stored).
using ExchangeSink = std::function<std::int64_t(const Exchange &)>;

struct GenContext {
    Problem problem;
    LoadedProblem loaded; // op graph with shapes, FLOPs, bytes
    GpuInfo gpu;
    Ceilings ceilings;
    std::optional<Timing> eager; // the eager baseline
    Policy policy = Policy::Strict;
    int round = 0;
    std::vector<KernelRecord> topK; // the best correct kernels so far, fastest first
    std::vector<KernelRecord> bank; // good kernels kept for seeding
    std::vector<IdeaRecord> tried;  // every idea so far, oldest first
    // Seconds left of the search's time budget when the round is planned (the part kept for the
    // final gate included); none: the search has no time budget.
    std::optional<double> secondsLeft;
    const std::atomic<bool> *cancel = nullptr;
    ExchangeSink record; // where a generator that asks a model reports each exchange; may be empty
};

struct Idea {
    std::string id;              // stable key; the search never repeats an id on the same parent
    std::string title;           // short ("Warp-shuffle row reduction")
    std::string text;            // the plain-language idea
    std::string why;             // which measurement or earlier result led to it
    std::int64_t parentNode = 0; // the kernel it builds on (0: from the reference)
    nlohmann::json params;       // generator-private (the built-in generator's parameter space)
    std::int64_t node = 0;       // its node in the session, set by the search once stored
    std::int64_t exchange = 0;   // the stored exchange that proposed it, 0: none
};

struct Draft {
    std::string title;  // "block 256, 4 rows per block"
    std::string source; // a complete candidate file (directives included)
    nlohmann::json params;
    std::int64_t exchange = 0; // the stored exchange that wrote it, 0: none
};

// A failed candidate to repair, with the idea it implements.
struct RepairJob {
    Idea idea;
    KernelRecord failed;
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
    virtual Result<std::vector<Draft>> implement(const GenContext &, const Idea &, int count,
                                                 Usage *usage = nullptr) = 0;
    // A corrected candidate for one that failed to compile or verify, or nothing.
    virtual Result<std::optional<Draft>> repair(const GenContext &, const Idea &, const KernelRecord &failed,
                                                Usage *usage = nullptr) = 0;

    // The same for several ideas or failures at once, one result each, in order. The defaults ask
    // one at a time; a generator that waits on the network runs them concurrently.
    virtual std::vector<Result<std::vector<Draft>>> implementAll(const GenContext &ctx, const std::vector<Idea> &ideas,
                                                                 int count, Usage *usage = nullptr)
    {
        std::vector<Result<std::vector<Draft>>> out;
        for (const Idea &idea : ideas) {
            if (ctx.cancel && *ctx.cancel)
                out.emplace_back(makeError(ErrorCode::Cancelled, "the search stopped"));
            else
                out.push_back(implement(ctx, idea, count, usage));
        }
        return out;
    }
    virtual std::vector<Result<std::optional<Draft>>>
    repairAll(const GenContext &ctx, const std::vector<RepairJob> &jobs, Usage *usage = nullptr)
    {
        std::vector<Result<std::optional<Draft>>> out;
        for (const RepairJob &j : jobs) {
            if (ctx.cancel && *ctx.cancel)
                out.emplace_back(makeError(ErrorCode::Cancelled, "the search stopped"));
            else
                out.push_back(repair(ctx, j.idea, j.failed, usage));
        }
        return out;
    }

    // The generator's own settings as the session keeps them (model, server, ...), never a key;
    // null when it has none. makeGenerator(name(), settings()) makes the same generator again.
    virtual nlohmann::json settings() const { return nullptr; }
};

} // namespace kf
