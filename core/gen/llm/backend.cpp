#include "gen/llm/backend.h"

#include "gen/llm/stream.h"
#include "gen/llm/url.h"

namespace kf::llm {

std::string toString(Ending e)
{
    switch (e) {
    case Ending::Truncated:
        return "truncated";
    case Ending::Refused:
        return "refused";
    default:
        return "complete";
    }
}

std::string Backend::answerBody(const HttpResult &r) const
{
    return isEventStream(r.contentType) ? fromStream(r.body) : r.body;
}

namespace {

using nlohmann::json;

Error notProtocol(const std::string &what, const std::string &host)
{
    return makeError(ErrorCode::LlmAnswer, "the answer from " + host + " is not " + what);
}

// A body that is an error instead of an answer: a stream that failed after it had begun
// (Anthropic's "overloaded_error" event, an OpenAI error chunk). Empty when it is none.
std::string streamError(const json &j)
{
    if (!j.is_object() || !j.contains("error"))
        return {};
    const json &e = j["error"];
    if (e.is_object() && e.contains("message") && e["message"].is_string())
        return e["message"].get<std::string>();
    return e.is_string() ? e.get<std::string>() : e.dump();
}

Error failedInStream(const std::string &message, const std::string &host)
{
    return makeError(ErrorCode::LlmAnswer, host + " reported an error instead of the answer: " + message);
}

std::int64_t count(const json &j, const char *key)
{
    auto it = j.find(key);
    return it != j.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

Result<std::vector<std::string>> modelIds(const std::string &body, const std::string &host)
{
    auto j = json::parse(body, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("data") || !j["data"].is_array())
        return notProtocol("a list of models", host);
    std::vector<std::string> out;
    for (const auto &m : j["data"])
        if (m.is_object() && m.contains("id") && m["id"].is_string())
            out.push_back(m["id"].get<std::string>());
    return out;
}

std::string dump(const json &body) { return body.dump(-1, ' ', false, json::error_handler_t::replace); }

// Chat Completions. Servers differ in the details: the answer limit goes in max_tokens or
// max_completion_tokens (a setting); vLLM and DeepSeek return thinking as reasoning_content,
// Ollama and OpenRouter as reasoning.
class OpenAIBackend : public Backend {
public:
    explicit OpenAIBackend(LlmConfig c) : Backend(std::move(c)) {}

    HttpRequest request(const Prompt &p) const override
    {
        json body = {
            {"model", m_config.model},
            {"messages",
             json::array({{{"role", "system"}, {"content", p.system}}, {{"role", "user"}, {"content", p.user}}})}};
        if (m_config.temperature)
            body["temperature"] = *m_config.temperature;
        if (m_config.maxTokens > 0)
            body[m_config.maxTokensField] = m_config.maxTokens;
        if (!m_config.reasoningEffort.empty())
            body["reasoning_effort"] = m_config.reasoningEffort;
        if (m_config.stream) {
            body["stream"] = true;
            body["stream_options"] = {{"include_usage", true}}; // the token counts come in a last chunk
        }
        HttpRequest r;
        r.url = url("/chat/completions");
        r.headers = headers();
        r.body = dump(body);
        return r;
    }

    Result<Reply> parse(const std::string &text) const override
    {
        const std::string host = hostOf(m_config.baseUrl);
        auto j = json::parse(text, nullptr, false);
        if (!j.is_discarded())
            if (std::string e = streamError(j); !e.empty())
                return failedInStream(e, host);
        if (j.is_discarded() || !j.is_object() || !j.contains("choices") || !j["choices"].is_array() ||
            j["choices"].empty() || !j["choices"][0].is_object())
            return notProtocol("a chat completion (no choices)", host);
        const json &choice = j["choices"][0];
        Reply r;
        bool noContent = true;
        if (auto m = choice.find("message"); m != choice.end() && m->is_object()) {
            if (auto c = m->find("content"); c != m->end() && c->is_string()) {
                r.text = c->get<std::string>();
                noContent = false;
            }
            if (auto c = m->find("refusal"); c != m->end() && c->is_string())
                r.refusal = c->get<std::string>();
            for (const char *k : {"reasoning_content", "reasoning"})
                if (auto c = m->find(k); c != m->end() && c->is_string() && r.reasoning.empty())
                    r.reasoning = c->get<std::string>();
        }
        if (auto f = choice.find("finish_reason"); f != choice.end() && f->is_string())
            r.stopReason = f->get<std::string>();
        // A reasoning model that spends the whole limit on thinking returns no content and
        // "length": that is a cut-off answer, not a refusal.
        if (r.stopReason == "length") {
            r.ending = Ending::Truncated;
        } else if (!r.refusal.empty()) {
            r.ending = Ending::Refused;
        } else if (r.stopReason == "content_filter") {
            r.ending = Ending::Refused;
            r.refusal = "withheld by " + host + "'s content filter (finish_reason content_filter)";
        } else if (noContent) {
            r.ending = Ending::Refused;
            r.refusal = "no content in the answer (content null, finish_reason " +
                (r.stopReason.empty() ? std::string("none") : r.stopReason) + ")";
        }
        if (auto u = j.find("usage"); u != j.end() && u->is_object()) {
            r.usage.promptTokens = count(*u, "prompt_tokens");
            r.usage.completionTokens = count(*u, "completion_tokens");
            if (auto d = u->find("completion_tokens_details"); d != u->end() && d->is_object())
                r.usage.reasoningTokens = count(*d, "reasoning_tokens");
        }
        return r;
    }

    HttpRequest modelsRequest() const override
    {
        HttpRequest r;
        r.post = false;
        r.url = url("/models");
        r.headers = headers();
        return r;
    }

    Result<std::vector<std::string>> parseModels(const std::string &body) const override
    {
        return modelIds(body, hostOf(m_config.baseUrl));
    }

protected:
    std::string fromStream(const std::string &events) const override { return openaiFromStream(parseEvents(events)); }

private:
    // A query in the base URL (Azure's api-version, a gateway's key) stays at the end.
    std::string url(const std::string &path) const
    {
        Url u;
        return parseUrl(m_config.baseUrl, u) ? u.join(path) : m_config.baseUrl + path;
    }

    std::vector<std::string> headers() const
    {
        std::vector<std::string> h = {"Content-Type: application/json"};
        // Local servers need no key; sending none keeps them from rejecting an empty one.
        if (const std::string key = m_config.key(); !key.empty())
            h.push_back("Authorization: Bearer " + key);
        return h;
    }
};

// Messages: the system prompt is its own field and max_tokens is required. Thinking comes in two
// forms: adaptive (the model decides how much, steered by output_config.effort; the only form
// Claude Opus 4.7 and later accept) and enabled with a budget_tokens (the only form of Claude 4.5
// and earlier); either allows no temperature but 1.
class AnthropicBackend : public Backend {
public:
    explicit AnthropicBackend(LlmConfig c) : Backend(std::move(c)) {}

    HttpRequest request(const Prompt &p) const override
    {
        json body = {{"model", m_config.model},
                     {"max_tokens", m_config.maxTokens},
                     {"system", p.system},
                     {"messages", json::array({{{"role", "user"}, {"content", p.user}}})}};
        if (m_config.thinking == "enabled")
            body["thinking"] = {{"type", "enabled"}, {"budget_tokens", m_config.thinkingBudget}};
        else if (!m_config.thinking.empty())
            body["thinking"] = {{"type", m_config.thinking}};
        if (!m_config.reasoningEffort.empty())
            body["output_config"] = {{"effort", m_config.reasoningEffort}};
        if (m_config.temperature)
            body["temperature"] = *m_config.temperature;
        if (m_config.stream)
            body["stream"] = true;
        HttpRequest r;
        r.url = url("/messages");
        r.headers = headers();
        r.body = dump(body);
        return r;
    }

    Result<Reply> parse(const std::string &text) const override
    {
        const std::string host = hostOf(m_config.baseUrl);
        auto j = json::parse(text, nullptr, false);
        if (!j.is_discarded())
            if (std::string e = streamError(j); !e.empty())
                return failedInStream(e, host);
        if (j.is_discarded() || !j.is_object() || !j.contains("content") || !j["content"].is_array())
            return notProtocol("a message (no content)", host);
        Reply r;
        for (const auto &block : j["content"]) {
            if (!block.is_object())
                continue;
            const std::string type = block.value("type", "");
            if (type == "text" && block.contains("text") && block["text"].is_string())
                r.text += block["text"].get<std::string>();
            else if (type == "thinking" && block.contains("thinking") && block["thinking"].is_string())
                r.reasoning += block["thinking"].get<std::string>();
        }
        if (auto s = j.find("stop_reason"); s != j.end() && s->is_string())
            r.stopReason = s->get<std::string>();
        if (r.stopReason == "max_tokens" || r.stopReason == "model_context_window_exceeded") {
            r.ending = Ending::Truncated;
        } else if (r.stopReason == "refusal") {
            r.ending = Ending::Refused;
            r.refusal = "declined by the model (stop_reason refusal)";
        }
        if (auto u = j.find("usage"); u != j.end() && u->is_object()) {
            // Cached prompt tokens are prompt tokens too.
            r.usage.promptTokens = count(*u, "input_tokens") + count(*u, "cache_creation_input_tokens") +
                count(*u, "cache_read_input_tokens");
            r.usage.completionTokens = count(*u, "output_tokens"); // thinking included
        }
        return r;
    }

    HttpRequest modelsRequest() const override
    {
        HttpRequest r;
        r.post = false;
        r.url = url("/models");
        r.headers = headers();
        return r;
    }

    Result<std::vector<std::string>> parseModels(const std::string &body) const override
    {
        return modelIds(body, hostOf(m_config.baseUrl));
    }

protected:
    std::string fromStream(const std::string &events) const override
    {
        return anthropicFromStream(parseEvents(events));
    }

private:
    // The base is the host ("https://api.anthropic.com") or ends with /v1; both work.
    std::string url(const std::string &path) const
    {
        Url u;
        if (!parseUrl(m_config.baseUrl, u))
            return m_config.baseUrl + path;
        const bool v1 = u.path.size() >= 3 && u.path.compare(u.path.size() - 3, 3, "/v1") == 0;
        return u.join((v1 ? "" : "/v1") + path);
    }

    std::vector<std::string> headers() const
    {
        std::vector<std::string> h = {"Content-Type: application/json",
                                      "anthropic-version: " + m_config.anthropicVersion};
        if (const std::string key = m_config.key(); !key.empty())
            h.push_back("x-api-key: " + key);
        return h;
    }
};

} // namespace

std::unique_ptr<Backend> makeBackend(const LlmConfig &c)
{
    if (c.protocol == Protocol::Anthropic)
        return std::make_unique<AnthropicBackend>(c);
    return std::make_unique<OpenAIBackend>(c);
}

} // namespace kf::llm
