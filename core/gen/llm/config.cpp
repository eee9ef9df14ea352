#include "gen/llm/config.h"

#include <cstdlib>
#include <set>

namespace kf::llm {

std::string toString(Protocol p) { return p == Protocol::Anthropic ? "anthropic" : "openai"; }

std::string LlmConfig::key() const
{
    if (!apiKey.empty())
        return apiKey;
    if (keyEnv.empty())
        return {};
    const char *v = std::getenv(keyEnv.c_str());
    return v ? std::string(v) : std::string();
}

namespace {

Error bad(const std::string &key, const std::string &what)
{
    return makeError("settings", "generator setting " + key + " " + what);
}

} // namespace

Result<LlmConfig> configFromJson(Protocol protocol, const nlohmann::json &j)
{
    LlmConfig c;
    c.protocol = protocol;
    c.baseUrl = protocol == Protocol::Anthropic ? "https://api.anthropic.com" : "https://api.openai.com/v1";
    c.keyEnv = protocol == Protocol::Anthropic ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
    if (!j.is_null() && !j.is_object())
        return makeError("settings", "generator settings must be a JSON object");
    static const std::set<std::string> known = {
        "base_url", "model", "temperature", "max_tokens", "reasoning_effort", "thinking_budget", "key_env",
        "api_key", "anthropic_version", "prices", "prompts", "timeout_s", "connect_timeout_s", "retries",
        "backoff_s", "max_wait_s", "concurrency"};
    if (j.is_object())
        for (const auto &[k, v] : j.items())
            if (!known.count(k))
                return bad(k, "is not known");
    auto str = [&](const char *k, std::string &out) -> Status {
        if (auto it = j.find(k); it != j.end() && !it->is_null()) {
            if (!it->is_string())
                return bad(k, "must be a string");
            out = it->get<std::string>();
        }
        return Ok{};
    };
    auto num = [&](const char *k, double &out, double low, double high) -> Status {
        if (auto it = j.find(k); it != j.end() && !it->is_null()) {
            if (!it->is_number())
                return bad(k, "must be a number");
            out = it->get<double>();
            if (!(out >= low && out <= high))
                return bad(k, "must be between " + std::to_string(low) + " and " + std::to_string(high));
        }
        return Ok{};
    };
    auto integer = [&](const char *k, int &out, int low, int high) -> Status {
        double v = out;
        if (Status s = num(k, v, low, high); !s)
            return s;
        if (v != double(int(v)))
            return bad(k, "must be a whole number");
        out = int(v);
        return Ok{};
    };
    for (auto [k, out] : {std::pair{"base_url", &c.baseUrl}, std::pair{"model", &c.model},
                          std::pair{"reasoning_effort", &c.reasoningEffort}, std::pair{"key_env", &c.keyEnv},
                          std::pair{"api_key", &c.apiKey}, std::pair{"anthropic_version", &c.anthropicVersion},
                          std::pair{"prices", &c.prices}, std::pair{"prompts", &c.prompts}})
        if (Status s = str(k, *out); !s)
            return s.error();
    if (auto it = j.find("temperature"); it != j.end() && !it->is_null()) {
        double t = 0;
        if (Status s = num("temperature", t, 0, 2); !s)
            return s.error();
        c.temperature = t;
    }
    const std::pair<const char *, int *> ints[] = {{"max_tokens", &c.maxTokens},
                                                   {"thinking_budget", &c.thinkingBudget},
                                                   {"retries", &c.http.retries},
                                                   {"concurrency", &c.http.concurrency}};
    const std::pair<int, int> intRanges[] = {{0, 10'000'000}, {0, 10'000'000}, {0, 20}, {1, 256}};
    for (std::size_t i = 0; i < std::size(ints); ++i)
        if (Status s = integer(ints[i].first, *ints[i].second, intRanges[i].first, intRanges[i].second); !s)
            return s.error();
    const std::pair<const char *, double *> reals[] = {{"timeout_s", &c.http.timeoutSeconds},
                                                       {"connect_timeout_s", &c.http.connectTimeoutSeconds},
                                                       {"backoff_s", &c.http.backoffSeconds},
                                                       {"max_wait_s", &c.http.maxWaitSeconds}};
    for (const auto &[k, out] : reals)
        if (Status s = num(k, *out, 0, 86400); !s)
            return s.error();
    if (c.http.timeoutSeconds <= 0)
        return bad("timeout_s", "must be more than 0");
    if (c.http.connectTimeoutSeconds <= 0)
        return bad("connect_timeout_s", "must be more than 0");
    while (c.baseUrl.size() > 1 && c.baseUrl.back() == '/')
        c.baseUrl.pop_back();
    if (c.baseUrl.rfind("http://", 0) != 0 && c.baseUrl.rfind("https://", 0) != 0)
        return bad("base_url", "must start with http:// or https://, not \"" + c.baseUrl + "\"");
    if (c.model.empty())
        return bad("model", "is needed (the model to ask, e.g. gpt-4.1 or claude-sonnet-4-5)");
    static const std::set<std::string> efforts = {"", "minimal", "low", "medium", "high"};
    if (!efforts.count(c.reasoningEffort))
        return bad("reasoning_effort", "must be minimal, low, medium or high");
    if (protocol == Protocol::Anthropic) {
        if (c.maxTokens == 0)
            c.maxTokens = 16384;
        if (c.thinkingBudget > 0 && c.thinkingBudget < 1024)
            return bad("thinking_budget", "must be 0 (off) or at least 1024 tokens (Anthropic's minimum)");
        if (c.thinkingBudget >= c.maxTokens)
            return bad("thinking_budget", "must be below max_tokens (" + std::to_string(c.maxTokens) +
                                              "), which counts the thinking too");
    }
    return c;
}

nlohmann::json toJson(const LlmConfig &c)
{
    nlohmann::json j = {{"base_url", c.baseUrl},
                        {"model", c.model},
                        {"max_tokens", c.maxTokens},
                        {"key_env", c.keyEnv},
                        {"timeout_s", c.http.timeoutSeconds},
                        {"connect_timeout_s", c.http.connectTimeoutSeconds},
                        {"retries", c.http.retries},
                        {"backoff_s", c.http.backoffSeconds},
                        {"max_wait_s", c.http.maxWaitSeconds},
                        {"concurrency", c.http.concurrency}};
    if (c.temperature)
        j["temperature"] = *c.temperature;
    if (!c.reasoningEffort.empty())
        j["reasoning_effort"] = c.reasoningEffort;
    if (c.protocol == Protocol::Anthropic) {
        j["thinking_budget"] = c.thinkingBudget;
        j["anthropic_version"] = c.anthropicVersion;
    }
    if (!c.prices.empty())
        j["prices"] = c.prices;
    if (!c.prompts.empty())
        j["prompts"] = c.prompts;
    return j;
}

std::string scrub(std::string text, const std::string &secret)
{
    if (secret.empty())
        return text;
    for (std::size_t at; (at = text.find(secret)) != std::string::npos;)
        text.replace(at, secret.size(), "***");
    // Fragments of 8 characters or more too: servers answer "Incorrect API key provided:
    // sk-abc...xyz", quoting the start and the end of the key.
    constexpr std::size_t kFragment = 8;
    for (std::size_t start = 0; start + kFragment <= secret.size(); ++start) {
        const std::string piece = secret.substr(start, kFragment);
        for (std::size_t at; (at = text.find(piece)) != std::string::npos;) {
            // Grow the match to the longest run of the secret at this place, then hide it.
            std::size_t end = at + kFragment, s = start + kFragment;
            while (end < text.size() && s < secret.size() && text[end] == secret[s]) {
                ++end;
                ++s;
            }
            text.replace(at, end - at, "***");
        }
    }
    return text;
}

} // namespace kf::llm
