#include "gen/llm/config.h"

#include "gen/llm/url.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <set>

namespace kf::llm {

namespace {

// The providers whose default key variable the generators read, and the only host each key is for.
struct Provider {
    Protocol protocol;
    const char *keyEnv, *host, *baseUrl;
};
constexpr Provider kProviders[] = {
    {Protocol::OpenAI, "OPENAI_API_KEY", "api.openai.com", "https://api.openai.com/v1"},
    {Protocol::Anthropic, "ANTHROPIC_API_KEY", "api.anthropic.com", "https://api.anthropic.com"},
};

const Provider &providerOf(Protocol p) { return p == Protocol::Anthropic ? kProviders[1] : kProviders[0]; }

bool isHost(const Url &u, const Provider &p) { return u.scheme == "https" && u.host == p.host; }

// The provider whose default variable `var` is, or none.
const Provider *ownerOf(const std::string &var)
{
    for (const Provider &p : kProviders)
        if (var == p.keyEnv)
            return &p;
    return nullptr;
}

// Plain HTTP leaves this machine readable by anything on the way.
bool clearText(const Url &u) { return u.scheme != "https" && !isLoopback(u.host); }

Error bad(const std::string &key, const std::string &what)
{
    return makeError(ErrorCode::Settings, "generator setting " + key + " " + what);
}

std::string number(double v)
{
    char b[32];
    std::snprintf(b, sizeof b, "%g", v);
    return b;
}

// The values each protocol documents, least effort first: OpenAI's reasoning_effort and
// Anthropic's output_config.effort (which models take which is the server's to say).
const std::vector<std::string> kOpenAIEfforts = {"none", "minimal", "low", "medium", "high", "xhigh"};
const std::vector<std::string> kAnthropicEfforts = {"low", "medium", "high", "xhigh", "max"};

bool oneOf(const std::vector<std::string> &values, const std::string &v)
{
    return std::find(values.begin(), values.end(), v) != values.end();
}

std::string listOf(const std::vector<std::string> &values)
{
    return std::accumulate(std::next(values.begin()), values.end(), values.front(),
                           [](std::string list, const std::string &v) { return list + ", " + v; });
}

} // namespace

std::string toString(Protocol p) { return p == Protocol::Anthropic ? "anthropic" : "openai"; }
std::string defaultBaseUrl(Protocol p) { return providerOf(p).baseUrl; }
std::string defaultKeyEnv(Protocol p) { return providerOf(p).keyEnv; }

std::string LlmConfig::key() const
{
    Url u;
    if (!parseUrl(baseUrl, u) || clearText(u))
        return {};
    if (!apiKey.empty())
        return apiKey;
    if (keyEnv.empty())
        return {};
    if (const Provider *owner = ownerOf(keyEnv); owner && !isHost(u, *owner))
        return {};
    const char *v = std::getenv(keyEnv.c_str());
    return v ? std::string(v) : std::string();
}

std::string LlmConfig::publicBaseUrl() const { return publicUrl(baseUrl); }

std::vector<std::string> LlmConfig::secrets() const
{
    std::vector<std::string> out = urlSecrets(baseUrl);
    if (std::string k = key(); !k.empty())
        out.push_back(std::move(k));
    return out;
}

namespace {

// Reads one setting of a JSON object when it is given (null is not given); errors name the key.
class Settings {
public:
    explicit Settings(const nlohmann::json &j) : m_j(j) {}

    bool given(const char *k) const { return m_j.is_object() && m_j.contains(k) && !m_j[k].is_null(); }

    Status str(const char *k, std::string &out) const
    {
        if (given(k)) {
            if (!m_j[k].is_string())
                return bad(k, "must be a string");
            out = m_j[k].get<std::string>();
        }
        return Ok{};
    }

    Status num(const char *k, double &out, double low, double high) const
    {
        if (given(k)) {
            if (!m_j[k].is_number())
                return bad(k, "must be a number");
            out = m_j[k].get<double>();
            if (!(out >= low && out <= high))
                return bad(k, "must be between " + number(low) + " and " + number(high));
        }
        return Ok{};
    }

    Status integer(const char *k, int &out, int low, int high) const
    {
        double v = out;
        if (Status s = num(k, v, low, high); !s)
            return s;
        if (v != double(int(v)))
            return bad(k, "must be a whole number");
        out = int(v);
        return Ok{};
    }

private:
    const nlohmann::json &m_j;
};

// Every given key into `c`: known keys only, each of its type and within its range.
Status readSettings(Protocol protocol, const nlohmann::json &j, LlmConfig &c)
{
    if (!j.is_null() && !j.is_object())
        return makeError(ErrorCode::Settings, "generator settings must be a JSON object");
    static const std::set<std::string> known = {
        "base_url",  "model",           "temperature", "max_tokens", "max_tokens_field",  "reasoning_effort",
        "thinking",  "thinking_budget", "stream",      "key_env",    "api_key",           "anthropic_version",
        "prices",    "prompts",         "timeout_s",   "max_time_s", "connect_timeout_s", "retries",
        "backoff_s", "max_wait_s",      "concurrency"};
    if (j.is_object())
        for (const auto &[k, v] : j.items())
            if (!known.count(k))
                return bad(k, "is not known");
    const Settings s(j);
    for (auto [k, out] : {std::pair{"base_url", &c.baseUrl}, std::pair{"model", &c.model},
                          std::pair{"reasoning_effort", &c.reasoningEffort}, std::pair{"key_env", &c.keyEnv},
                          std::pair{"api_key", &c.apiKey}, std::pair{"anthropic_version", &c.anthropicVersion},
                          std::pair{"prices", &c.prices}, std::pair{"prompts", &c.prompts},
                          std::pair{"max_tokens_field", &c.maxTokensField}, std::pair{"thinking", &c.thinking}})
        if (Status st = s.str(k, *out); !st)
            return st;
    if (s.given("stream")) {
        if (!j["stream"].is_boolean())
            return bad("stream", "must be true or false");
        c.stream = j["stream"].get<bool>();
    }
    // Anthropic's temperature runs from 0 to 1, OpenAI's from 0 to 2.
    if (s.given("temperature")) {
        double t = 0;
        if (Status st = s.num("temperature", t, 0, protocol == Protocol::Anthropic ? 1 : 2); !st)
            return st;
        c.temperature = t;
    }
    const std::pair<const char *, int *> ints[] = {{"max_tokens", &c.maxTokens},
                                                   {"thinking_budget", &c.thinkingBudget},
                                                   {"retries", &c.http.retries},
                                                   {"concurrency", &c.http.concurrency}};
    const std::pair<int, int> intRanges[] = {{0, 10'000'000}, {0, 10'000'000}, {0, 20}, {1, 256}};
    for (std::size_t i = 0; i < std::size(ints); ++i)
        if (Status st = s.integer(ints[i].first, *ints[i].second, intRanges[i].first, intRanges[i].second); !st)
            return st;
    const std::pair<const char *, double *> reals[] = {{"timeout_s", &c.http.timeoutSeconds},
                                                       {"max_time_s", &c.http.maxTimeSeconds},
                                                       {"connect_timeout_s", &c.http.connectTimeoutSeconds},
                                                       {"backoff_s", &c.http.backoffSeconds},
                                                       {"max_wait_s", &c.http.maxWaitSeconds}};
    for (const auto &[k, out] : reals)
        if (Status st = s.num(k, *out, 0, 86400); !st)
            return st;
    if (c.http.timeoutSeconds <= 0)
        return bad("timeout_s", "must be more than 0");
    if (c.http.connectTimeoutSeconds <= 0)
        return bad("connect_timeout_s", "must be more than 0");
    return Ok{};
}

// The base URL without trailing slashes, parsed into `url`.
Status readBaseUrl(LlmConfig &c, Url &url)
{
    while (c.baseUrl.size() > 1 && c.baseUrl.back() == '/')
        c.baseUrl.pop_back();
    if (c.baseUrl.rfind("http://", 0) != 0 && c.baseUrl.rfind("https://", 0) != 0)
        return bad("base_url", "must start with http:// or https://, not \"" + publicUrl(c.baseUrl) + "\"");
    if (!parseUrl(c.baseUrl, url))
        return bad("base_url", "\"" + publicUrl(c.baseUrl) + "\" is not a URL with a host name");
    return Ok{};
}

// Where the key may go. Without key_env, only the provider's own API gets its default variable.
Status checkKeyDestination(Protocol protocol, bool keyEnvGiven, LlmConfig &c, const Url &url)
{
    const Provider &own = providerOf(protocol);
    if (!keyEnvGiven)
        c.keyEnv = isHost(url, own) ? own.keyEnv : "";
    if (const Provider *owner = ownerOf(c.keyEnv); owner && !isHost(url, *owner))
        return bad("key_env",
                   std::string("names ") + owner->keyEnv + ", the key for https://" + owner->host +
                       ", which is sent nowhere else; put the key for " + url.authority() +
                       " in a variable of its own and name that, or name none (\"\")");
    if (clearText(url)) {
        const char *which = hasCredentials(c.baseUrl) ? "base_url"
            : !c.apiKey.empty()                       ? "api_key"
            : !c.keyEnv.empty()                       ? "key_env"
                                                      : nullptr;
        if (which)
            return bad(which,
                       "would send a key in clear text over plain HTTP to " + url.authority() +
                           ": use https://, reach the server through an SSH tunnel to localhost, or send "
                           "no key (key_env \"\")");
    }
    return Ok{};
}

Status checkOpenAI(LlmConfig &c, const Url &url)
{
    if (!c.reasoningEffort.empty() && !oneOf(kOpenAIEfforts, c.reasoningEffort))
        return bad("reasoning_effort", "must be one of " + listOf(kOpenAIEfforts));
    if (!c.thinking.empty() || c.thinkingBudget > 0)
        return bad(c.thinking.empty() ? "thinking_budget" : "thinking",
                   "is Anthropic's; the openai generator takes reasoning_effort");
    // OpenAI's reference lists max_tokens as deprecated, and its reasoning models refuse it;
    // most other servers know only max_tokens. A gateway in front of reasoning models says so.
    if (c.maxTokensField.empty())
        c.maxTokensField = isHost(url, providerOf(Protocol::OpenAI)) ? "max_completion_tokens" : "max_tokens";
    if (c.maxTokensField != "max_tokens" && c.maxTokensField != "max_completion_tokens")
        return bad("max_tokens_field", "must be max_tokens or max_completion_tokens");
    if (c.temperature && !c.reasoningEffort.empty() && c.reasoningEffort != "none")
        c.warnings.push_back("temperature " + number(*c.temperature) + " is sent with reasoning_effort " +
                             c.reasoningEffort +
                             ": OpenAI's reasoning models refuse any temperature but their default (HTTP 400), "
                             "other servers may ignore one of them");
    return Ok{};
}

Status checkAnthropic(LlmConfig &c)
{
    if (!c.maxTokensField.empty())
        return bad("max_tokens_field", "is for the openai generator; Anthropic's limit is always max_tokens");
    if (!c.reasoningEffort.empty() && !oneOf(kAnthropicEfforts, c.reasoningEffort))
        return bad("reasoning_effort",
                   "is sent to Anthropic as output_config.effort, which takes " + listOf(kAnthropicEfforts));
    if (c.maxTokens == 0)
        c.maxTokens = 16384;
    if (c.thinking.empty() && c.thinkingBudget > 0)
        c.thinking = "enabled"; // a budget alone is the budget form, as before adaptive thinking existed
    if (!c.thinking.empty() && c.thinking != "adaptive" && c.thinking != "enabled" && c.thinking != "disabled")
        return bad("thinking", "must be adaptive, enabled (with thinking_budget) or disabled");
    if (c.thinking != "enabled" && c.thinkingBudget > 0)
        return bad("thinking_budget", "belongs to thinking enabled; adaptive thinking is steered by reasoning_effort");
    if (c.thinking == "enabled") {
        if (c.thinkingBudget < 1024)
            return bad("thinking_budget", "must be at least 1024 tokens with thinking enabled (Anthropic's minimum)");
        if (c.thinkingBudget >= c.maxTokens)
            return bad("thinking_budget",
                       "must be below max_tokens (" + std::to_string(c.maxTokens) + "), which counts the thinking too");
    }
    if ((c.thinking == "enabled" || c.thinking == "adaptive") && c.temperature && *c.temperature != 1)
        return bad("temperature",
                   "must be 1 or left out while thinking is " + c.thinking + " (Anthropic refuses any other)");
    return Ok{};
}

} // namespace

Result<LlmConfig> configFromJson(Protocol protocol, const nlohmann::json &j)
{
    LlmConfig c;
    c.protocol = protocol;
    c.baseUrl = defaultBaseUrl(protocol);
    if (Status s = readSettings(protocol, j, c); !s)
        return s.error();
    Url url;
    if (Status s = readBaseUrl(c, url); !s)
        return s.error();
    if (c.model.empty())
        return bad("model", "is needed (the model to ask, e.g. gpt-4.1 or claude-sonnet-4-5)");
    if (Status s = checkKeyDestination(protocol, Settings(j).given("key_env"), c, url); !s)
        return s.error();
    const Status s = protocol == Protocol::OpenAI ? checkOpenAI(c, url) : checkAnthropic(c);
    if (!s)
        return s.error();
    return c;
}

nlohmann::json toJson(const LlmConfig &c)
{
    nlohmann::json j = {{"base_url", c.publicBaseUrl()},
                        {"model", c.model},
                        {"max_tokens", c.maxTokens},
                        {"stream", c.stream},
                        {"timeout_s", c.http.timeoutSeconds},
                        {"max_time_s", c.http.maxTimeSeconds},
                        {"connect_timeout_s", c.http.connectTimeoutSeconds},
                        {"retries", c.http.retries},
                        {"backoff_s", c.http.backoffSeconds},
                        {"max_wait_s", c.http.maxWaitSeconds},
                        {"concurrency", c.http.concurrency}};
    // The default variable is left out, so that a resumed search sent to another server does not
    // carry it there; configFromJson gives it back for the provider's own API.
    Url url;
    if (!parseUrl(c.baseUrl, url) || !isHost(url, providerOf(c.protocol)) || c.keyEnv != defaultKeyEnv(c.protocol))
        j["key_env"] = c.keyEnv;
    if (c.temperature)
        j["temperature"] = *c.temperature;
    if (!c.reasoningEffort.empty())
        j["reasoning_effort"] = c.reasoningEffort;
    if (c.protocol == Protocol::OpenAI) {
        j["max_tokens_field"] = c.maxTokensField;
    } else {
        if (!c.thinking.empty())
            j["thinking"] = c.thinking;
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

std::string scrub(std::string text, const std::vector<std::string> &secrets)
{
    for (const auto &s : secrets)
        text = scrub(std::move(text), s);
    return text;
}

} // namespace kf::llm
