#include "gen/llm/backend.h"

namespace kf::llm {

namespace {

using nlohmann::json;

Error notProtocol(const std::string &what, const std::string &host)
{
    return makeError("llm-answer", "the answer from " + host + " is not " + what);
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

// Chat Completions. Servers differ in the details: OpenAI's own API wants max_completion_tokens
// (its reasoning models refuse max_tokens), the others take max_tokens; vLLM and DeepSeek return
// thinking as reasoning_content, Ollama and OpenRouter as reasoning.
class OpenAIBackend : public Backend {
public:
    explicit OpenAIBackend(LlmConfig c) : Backend(std::move(c)) {}

    HttpRequest request(const Prompt &p) const override
    {
        json body = {{"model", m_config.model},
                     {"messages", json::array({{{"role", "system"}, {"content", p.system}},
                                               {{"role", "user"}, {"content", p.user}}})}};
        if (m_config.temperature)
            body["temperature"] = *m_config.temperature;
        if (m_config.maxTokens > 0)
            body[openAIHost() ? "max_completion_tokens" : "max_tokens"] = m_config.maxTokens;
        if (!m_config.reasoningEffort.empty())
            body["reasoning_effort"] = m_config.reasoningEffort;
        HttpRequest r;
        r.url = m_config.baseUrl + "/chat/completions";
        r.headers = headers();
        r.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
        return r;
    }

    Result<Reply> parse(const std::string &text) const override
    {
        const std::string host = hostOf(m_config.baseUrl);
        auto j = json::parse(text, nullptr, false);
        if (j.is_discarded() || !j.is_object() || !j.contains("choices") || !j["choices"].is_array() ||
            j["choices"].empty() || !j["choices"][0].is_object())
            return notProtocol("a chat completion (no choices)", host);
        const json &choice = j["choices"][0];
        Reply r;
        if (auto m = choice.find("message"); m != choice.end() && m->is_object()) {
            if (auto c = m->find("content"); c != m->end() && c->is_string())
                r.text = c->get<std::string>();
            for (const char *k : {"reasoning_content", "reasoning"})
                if (auto c = m->find(k); c != m->end() && c->is_string() && r.reasoning.empty())
                    r.reasoning = c->get<std::string>();
        }
        if (auto f = choice.find("finish_reason"); f != choice.end() && f->is_string())
            r.stopReason = f->get<std::string>();
        r.truncated = r.stopReason == "length";
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
        r.url = m_config.baseUrl + "/models";
        r.headers = headers();
        return r;
    }

    Result<std::vector<std::string>> parseModels(const std::string &body) const override
    {
        return modelIds(body, hostOf(m_config.baseUrl));
    }

private:
    bool openAIHost() const { return hostOf(m_config.baseUrl) == "api.openai.com"; }

    std::vector<std::string> headers() const
    {
        std::vector<std::string> h = {"Content-Type: application/json"};
        // Local servers need no key; sending none keeps them from rejecting an empty one.
        if (const std::string key = m_config.key(); !key.empty())
            h.push_back("Authorization: Bearer " + key);
        return h;
    }
};

// Messages: the system prompt is its own field, max_tokens is required, extended thinking has a
// token budget and then allows no temperature other than 1.
class AnthropicBackend : public Backend {
public:
    explicit AnthropicBackend(LlmConfig c) : Backend(std::move(c)) {}

    HttpRequest request(const Prompt &p) const override
    {
        json body = {{"model", m_config.model},
                     {"max_tokens", m_config.maxTokens},
                     {"system", p.system},
                     {"messages", json::array({{{"role", "user"}, {"content", p.user}}})}};
        if (m_config.thinkingBudget > 0)
            body["thinking"] = {{"type", "enabled"}, {"budget_tokens", m_config.thinkingBudget}};
        else if (m_config.temperature)
            body["temperature"] = *m_config.temperature;
        HttpRequest r;
        r.url = url("/messages");
        r.headers = headers();
        r.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
        return r;
    }

    Result<Reply> parse(const std::string &text) const override
    {
        const std::string host = hostOf(m_config.baseUrl);
        auto j = json::parse(text, nullptr, false);
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
        r.truncated = r.stopReason == "max_tokens";
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

private:
    // The base is the host ("https://api.anthropic.com") or ends with /v1; both work.
    std::string url(const std::string &path) const
    {
        const std::string &b = m_config.baseUrl;
        const bool v1 = b.size() >= 3 && b.compare(b.size() - 3, 3, "/v1") == 0;
        return b + (v1 ? "" : "/v1") + path;
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
