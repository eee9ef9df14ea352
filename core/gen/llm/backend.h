#pragma once
// The two wire protocols: OpenAI-compatible Chat Completions (OpenAI, vLLM, SGLang, llama.cpp's
// server, Ollama, LM Studio) and Anthropic Messages. A backend turns a prompt into an HTTP request
// and a response body into the answer's text and token counts; it does no I/O itself.
#include "gen/generator.h"
#include "gen/llm/config.h"
#include "gen/llm/http.h"

#include <memory>
#include <string>
#include <vector>

namespace kf::llm {

struct Prompt {
    std::string system, user;
};

struct Reply {
    std::string text;          // the answer
    std::string reasoning;     // visible thinking, when the server returns it
    Usage usage;               // tokens; cost is filled in by the caller from the price table
    bool truncated = false;    // stopped at the token limit
    std::string stopReason;    // as the server said it ("stop", "length", "end_turn", "max_tokens")
};

class Backend {
public:
    virtual ~Backend() = default;
    // The request for one prompt, headers and key included (the key lives only in the headers).
    virtual HttpRequest request(const Prompt &) const = 0;
    // The answer in a 2xx body; an error when the body is not this protocol's answer.
    virtual Result<Reply> parse(const std::string &body) const = 0;
    virtual HttpRequest modelsRequest() const = 0;
    virtual Result<std::vector<std::string>> parseModels(const std::string &body) const = 0;
    const LlmConfig &config() const { return m_config; }

protected:
    explicit Backend(LlmConfig c) : m_config(std::move(c)) {}
    LlmConfig m_config;
};

std::unique_ptr<Backend> makeBackend(const LlmConfig &);

} // namespace kf::llm
