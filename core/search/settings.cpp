#include "search/settings.h"

namespace kf {

namespace {

struct Range {
    const char *key;
    int SearchSettings::*field;
    int low, high;
};

// The upper limits only catch typos (a budget typed into --rounds); they are far above any
// useful search.
constexpr Range kRanges[] = {
    {"rounds", &SearchSettings::rounds, 1, 100000},
    {"ideas_per_round", &SearchSettings::ideasPerRound, 1, 1000},
    {"impls_per_idea", &SearchSettings::implsPerIdea, 1, 1000},
    {"top_k", &SearchSettings::topK, 1, 1000},
    {"bank_size", &SearchSettings::bankSize, 0, 1000},
    {"trials", &SearchSettings::trials, 1, 1000},
    {"timing_trials", &SearchSettings::timingTrials, 1, 100000},
    {"repairs", &SearchSettings::repairs, 0, 10},
};

} // namespace

Status SearchSettings::validate() const
{
    for (const Range &r : kRanges) {
        int v = this->*r.field;
        if (v < r.low || v > r.high)
            return makeError(ErrorCode::Settings,
                             std::string(r.key) + " must be between " + std::to_string(r.low) + " and " +
                                 std::to_string(r.high) + ", not " + std::to_string(v));
    }
    if (!(timeBudgetSeconds >= 0))
        return makeError(ErrorCode::Settings, "time_budget_s must be 0 (none) or a positive number of seconds");
    if (tokenBudget < 0)
        return makeError(ErrorCode::Settings, "token_budget must be 0 (none) or a positive number of tokens");
    if (!(costBudget >= 0))
        return makeError(ErrorCode::Settings, "cost_budget must be 0 (none) or a positive amount");
    return Ok{};
}

void to_json(nlohmann::json &j, const SearchSettings &s)
{
    j = nlohmann::json::object();
    for (const Range &r : kRanges)
        j[r.key] = s.*r.field;
    j["policy"] = s.policy ? nlohmann::json(toString(*s.policy)) : nlohmann::json(nullptr);
    j["time_budget_s"] = s.timeBudgetSeconds;
    j["token_budget"] = s.tokenBudget;
    j["cost_budget"] = s.costBudget;
    j["compile_only"] = s.compileOnly;
    j["sanitize"] = s.sanitize;
}

Result<SearchSettings> settingsFromJson(const nlohmann::json &j)
{
    if (!j.is_object())
        return makeError(ErrorCode::Settings, "search settings must be a JSON object");
    SearchSettings s;
    for (const Range &r : kRanges) {
        auto it = j.find(r.key);
        if (it == j.end() || it->is_null())
            continue;
        if (!it->is_number_integer())
            return makeError(ErrorCode::Settings, std::string(r.key) + " must be an integer");
        s.*r.field = it->get<int>();
    }
    if (auto it = j.find("policy"); it != j.end() && !it->is_null()) {
        auto p = it->is_string() ? parsePolicy(it->get<std::string>()) : std::nullopt;
        if (!p)
            return makeError(ErrorCode::Settings, "policy must be \"strict\" or \"loose\"");
        s.policy = *p;
    }
    if (auto it = j.find("time_budget_s"); it != j.end() && !it->is_null()) {
        if (!it->is_number())
            return makeError(ErrorCode::Settings, "time_budget_s must be a number of seconds");
        s.timeBudgetSeconds = it->get<double>();
    }
    if (auto it = j.find("token_budget"); it != j.end() && !it->is_null()) {
        if (!it->is_number_integer())
            return makeError(ErrorCode::Settings, "token_budget must be a whole number of tokens");
        s.tokenBudget = it->get<std::int64_t>();
    }
    if (auto it = j.find("cost_budget"); it != j.end() && !it->is_null()) {
        if (!it->is_number())
            return makeError(ErrorCode::Settings, "cost_budget must be a number");
        s.costBudget = it->get<double>();
    }
    if (auto it = j.find("compile_only"); it != j.end() && !it->is_null()) {
        if (!it->is_boolean())
            return makeError(ErrorCode::Settings, "compile_only must be true or false");
        s.compileOnly = it->get<bool>();
    }
    if (auto it = j.find("sanitize"); it != j.end() && !it->is_null()) {
        if (!it->is_boolean())
            return makeError(ErrorCode::Settings, "sanitize must be true or false");
        s.sanitize = it->get<bool>();
    }
    if (Status v = s.validate(); !v)
        return v.error();
    return s;
}

Policy effectivePolicy(const SearchSettings &s, const Problem &p) { return s.policy.value_or(p.policy); }

} // namespace kf
