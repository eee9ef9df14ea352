#pragma once
// The settings of an LLM generator: which server and model, how it is asked, how requests are
// paced. Kept in the session (meta "generator_settings") without the key, so a resumed search
// asks the same model the same way.
#include "gen/llm/http.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace kf::llm {

enum class Protocol { OpenAI, Anthropic };

struct LlmConfig {
    Protocol protocol = Protocol::OpenAI;
    std::string baseUrl;              // "https://api.openai.com/v1", "http://localhost:11434/v1", ...
    std::string model;
    std::optional<double> temperature; // none: the server's default (reasoning models take no other)
    int maxTokens = 0;                // 0: the protocol's default (none for OpenAI, 16384 for Anthropic)
    std::string reasoningEffort;      // OpenAI: "minimal", "low", "medium", "high"; "" sends none
    int thinkingBudget = 0;           // Anthropic extended thinking: budget_tokens, 0: off
    std::string keyEnv;               // the environment variable holding the key
    std::string apiKey;               // a key given by settings; never stored or shown
    std::string anthropicVersion = "2023-06-01";
    std::string prices;               // a price table file; "" looks for llm/prices.json
    std::string prompts;              // a folder of prompt templates that comes first; "" none
    HttpOptions http;

    // The key to send: apiKey when given, else the named environment variable's value.
    std::string key() const;
};

std::string toString(Protocol);       // "openai", "anthropic"

// Reads settings from JSON (keys as in to_json below; CLI options map onto them one to one),
// starting from the protocol's defaults. Unknown keys and wrong types are errors naming the key.
// "api_key" is accepted here (settings held by the GUI) and never written back.
Result<LlmConfig> configFromJson(Protocol, const nlohmann::json &);
// The settings as the session keeps them: everything but the key.
nlohmann::json toJson(const LlmConfig &);

// Replaces every occurrence of `secret` (and of its longer fragments, as servers echo keys in
// part) in `text` by "***", so no key reaches a session, a log or a message.
std::string scrub(std::string text, const std::string &secret);

} // namespace kf::llm
