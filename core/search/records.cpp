#include "search/records.h"

namespace kf {

namespace {

std::optional<nlohmann::json> parseJson(const std::optional<std::string> &text)
{
    if (!text)
        return std::nullopt;
    auto j = nlohmann::json::parse(*text, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        return std::nullopt;
    return j;
}

template <typename T>
T value(const nlohmann::json &j, const char *key, T fallback)
{
    // Sessions are untrusted files: a field of the wrong type reads as missing.
    try {
        return j.value(key, fallback);
    } catch (const nlohmann::json::exception &) {
        return fallback;
    }
}

} // namespace

nlohmann::json ideaInfoJson(const Idea &idea, const std::string &generator)
{
    return {{"idea_id", idea.id},
            {"parent_kernel", idea.parentNode},
            {"params", idea.params},
            {"why", idea.why},
            {"generator", generator}};
}

IdeaInfo readIdeaInfo(const NodeRecord &node)
{
    IdeaInfo info;
    info.ideaId = node.title;
    info.why = node.reason;
    if (auto j = parseJson(node.resultJson)) {
        info.ideaId = value(*j, "idea_id", info.ideaId);
        info.parentKernel = value<std::int64_t>(*j, "parent_kernel", 0);
        info.params = j->contains("params") ? (*j)["params"] : nlohmann::json();
        info.why = value(*j, "why", info.why);
        info.generator = value(*j, "generator", std::string());
    }
    return info;
}

std::string candidateResultJson(const EvalResult &result, const DraftInfo &draft)
{
    nlohmann::json j = result;
    j["draft"] = {{"params", draft.params}, {"repair_of", draft.repairOf}, {"repair_depth", draft.repairDepth}};
    return j.dump();
}

std::optional<CandidateReading> readCandidate(const NodeRecord &node)
{
    auto j = parseJson(node.resultJson);
    if (!j)
        return std::nullopt;
    CandidateReading r;
    try {
        r.result = j->get<EvalResult>();
    } catch (const nlohmann::json::exception &) {
        return std::nullopt;
    }
    if (auto d = j->find("draft"); d != j->end() && d->is_object()) {
        r.draft.params = d->contains("params") ? (*d)["params"] : nlohmann::json();
        r.draft.repairOf = value<std::int64_t>(*d, "repair_of", 0);
        r.draft.repairDepth = value(*d, "repair_depth", 0);
    }
    return r;
}

nlohmann::json roundSummaryJson(const RoundSummary &s)
{
    return {{"best_ms", s.bestMs},
            {"best_node", s.bestNode},
            {"best_idea", s.bestIdea},
            {"round_best_ms", s.roundBestMs},
            {"round_best_node", s.roundBestNode},
            {"candidates", s.candidates},
            {"correct", s.correct},
            {"seconds", s.seconds},
            {"sanitized", s.sanitized},
            {"sanitizer_findings", s.sanitizerFindings},
            {"sanitizer_seconds", s.sanitizerSeconds},
            {"best_gate", s.bestGate},
            {"usage",
             {{"prompt_tokens", s.usage.promptTokens},
              {"completion_tokens", s.usage.completionTokens},
              {"reasoning_tokens", s.usage.reasoningTokens},
              {"cost", s.usage.cost}}}};
}

std::optional<RoundSummary> readRoundSummary(const NodeRecord &node)
{
    auto j = parseJson(node.resultJson);
    if (!j)
        return std::nullopt;
    RoundSummary s;
    s.bestMs = value(*j, "best_ms", 0.0);
    s.bestNode = value<std::int64_t>(*j, "best_node", 0);
    s.bestIdea = value(*j, "best_idea", std::string());
    s.roundBestMs = value(*j, "round_best_ms", 0.0);
    s.roundBestNode = value<std::int64_t>(*j, "round_best_node", 0);
    s.candidates = value(*j, "candidates", 0);
    s.correct = value(*j, "correct", 0);
    s.seconds = value(*j, "seconds", 0.0);
    s.sanitized = value(*j, "sanitized", 0);
    s.sanitizerFindings = value(*j, "sanitizer_findings", 0);
    s.sanitizerSeconds = value(*j, "sanitizer_seconds", 0.0);
    s.bestGate = value(*j, "best_gate", std::string());
    if (auto u = j->find("usage"); u != j->end() && u->is_object()) {
        s.usage.promptTokens = value<std::int64_t>(*u, "prompt_tokens", 0);
        s.usage.completionTokens = value<std::int64_t>(*u, "completion_tokens", 0);
        s.usage.reasoningTokens = value<std::int64_t>(*u, "reasoning_tokens", 0);
        s.usage.cost = value(*u, "cost", 0.0);
    }
    return s;
}

double baselineMedianMs(const std::optional<nlohmann::json> &baseline)
{
    if (!baseline || !baseline->is_object())
        return 0;
    auto t = baseline->find("timing");
    if (t == baseline->end() || !t->is_object())
        return 0;
    return value(*t, "median_ms", 0.0);
}

} // namespace kf
