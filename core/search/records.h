#pragma once
// How the search keeps its own facts in the session's nodes (docs/search.md, "What the store
// holds"). The store knows rows; these are the search's readings and writings of them:
//   idea node      result_json = {"idea_id", "parent_kernel", "params", "why", "generator"}
//   candidate node result_json = the EvalResult JSON plus "draft": {"params", "repair_of", "repair_depth"}
//   round node     result_json = the round summary below
#include "eval/protocol.h"
#include "gen/generator.h"
#include "store/session_store.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace kf {

// Status words of the search's own nodes (candidates use the verdict strings).
namespace node_status {
inline constexpr std::string_view Running = "running";         // round in progress
inline constexpr std::string_view Finished = "finished";       // round completed
inline constexpr std::string_view Stopped = "stopped";         // round cut short; the reason says why
inline constexpr std::string_view Interrupted = "interrupted"; // the process died; found at resume
inline constexpr std::string_view Queued = "queued";           // idea or candidate not done yet
inline constexpr std::string_view Failed = "failed";           // idea without a correct candidate
inline constexpr std::string_view NeedsGpu = "needs gpu";      // idea whose candidates compiled, not evaluated
} // namespace node_status

struct IdeaInfo {
    std::string ideaId;
    std::int64_t parentKernel = 0;
    nlohmann::json params;
    std::string why;
    std::string generator;
};
nlohmann::json ideaInfoJson(const Idea &, const std::string &generator);
IdeaInfo readIdeaInfo(const NodeRecord &); // falls back to the title as the id when the JSON is missing

struct DraftInfo {
    nlohmann::json params;
    std::int64_t repairOf = 0;
    int repairDepth = 0; // repairs between this candidate and its first draft
};
std::string candidateResultJson(const EvalResult &, const DraftInfo &);
struct CandidateReading {
    EvalResult result;
    DraftInfo draft;
};
// None when the node has no result yet or its JSON is not an EvalResult.
std::optional<CandidateReading> readCandidate(const NodeRecord &);

struct RoundSummary {
    double bestMs = 0; // session best after the round
    std::int64_t bestNode = 0;
    std::string bestIdea;
    double roundBestMs = 0; // fastest correct candidate of this round
    std::int64_t roundBestNode = 0;
    int candidates = 0, correct = 0;
    double seconds = 0;
    Usage usage;
    int sanitized = 0, sanitizerFindings = 0; // kernels the sanitizer gate ran this round, and those it demoted
    double sanitizerSeconds = 0;
    std::string bestGate; // the session best's gate at the round's end: "clean", "pending", "unchecked", "off"
};
nlohmann::json roundSummaryJson(const RoundSummary &);
std::optional<RoundSummary> readRoundSummary(const NodeRecord &);

// The eager baseline's median from the session's "baseline" meta JSON ({"timing": {...}}), 0 if none.
double baselineMedianMs(const std::optional<nlohmann::json> &baseline);

} // namespace kf
