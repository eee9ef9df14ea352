#pragma once
// The two wire protocols: OpenAI-compatible Chat Completions (OpenAI, vLLM, SGLang, llama.cpp's
// server, Ollama, LM Studio) and Anthropic Messages. A backend turns a prompt into an HTTP request
// and a response (a body, or a stream of events) into the answer's text, token counts and how it
// ended; it does no I/O itself.
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

// How an answer ended: in full, cut off at a token or context limit, or refused (by the model
// or a content filter).
enum class Ending { Complete, Truncated, Refused };
std::string toString(Ending); // "complete", "truncated", "refused"

struct Reply {
    std::string text;       // the answer
    std::string reasoning;  // visible thinking, when the server returns it
    Usage usage;            // tokens; cost is filled in by the caller from the price table
    std::string stopReason; // as the server said it ("stop", "length", "end_turn", "max_tokens", "refusal")
    Ending ending = Ending::Complete;
    std::string refusal; // for a refusal: why, in the model's or the server's words
    bool truncated() const { return ending == Ending::Truncated; }
};

class Backend {
public:
    virtual ~Backend() = default;
    // The request for one prompt, headers and key included (the key lives only in the headers).
    virtual HttpRequest request(const Prompt &) const = 0;
    // The answer as one JSON document: a 2xx body as it came, or a stream of events put back
    // together into the body the same request would have had without streaming.
    std::string answerBody(const HttpResult &) const;
    // The answer in such a body; an error when it is not this protocol's answer.
    virtual Result<Reply> parse(const std::string &body) const = 0;
    virtual HttpRequest modelsRequest() const = 0;
    virtual Result<std::vector<std::string>> parseModels(const std::string &body) const = 0;
    const LlmConfig &config() const { return m_config; }

protected:
    explicit Backend(LlmConfig c) : m_config(std::move(c)) {}
    virtual std::string fromStream(const std::string &events) const = 0;
    LlmConfig m_config;
};

std::unique_ptr<Backend> makeBackend(const LlmConfig &);

} // namespace kf::llm
