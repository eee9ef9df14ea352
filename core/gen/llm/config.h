#pragma once
// The settings of an LLM generator: which server and model, how it is asked, how requests are
// paced. Kept in the session (meta "generator_settings") without the key or credentials, so a
// resumed search asks the same model the same way.
//
// Where a key may go is decided here, once: a provider's default variable (OPENAI_API_KEY,
// ANTHROPIC_API_KEY) only to that provider's own host over HTTPS; any other server only the key
// of a variable named for it (key_env) or handed over by the workbench (api_key); and no key, nor
// credentials in the URL, over plain HTTP to a host that is not this machine.
#include "gen/llm/http.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kf::llm {

enum class Protocol { OpenAI, Anthropic };

struct LlmConfig {
    Protocol protocol = Protocol::OpenAI;
    std::string baseUrl; // as given, credentials included: requests go here ("https://api.openai.com/v1")
    std::string model;
    std::optional<double> temperature; // none: the server's default
    int maxTokens = 0;                 // 0: the protocol's default (none for OpenAI, 16384 for Anthropic)
    std::string maxTokensField;        // OpenAI: "max_completion_tokens" or "max_tokens", the field the limit goes in
    std::string reasoningEffort;       // OpenAI reasoning_effort; Anthropic output_config.effort; "" sends none
    std::string thinking;   // Anthropic thinking.type: "adaptive", "enabled" (budget), "disabled"; "" sends none
    int thinkingBudget = 0; // Anthropic budget_tokens with thinking "enabled"
    bool stream = true;     // ask for server-sent events, so silence, not length, ends an attempt
    std::string keyEnv;     // the environment variable holding the key; "" sends none
    std::string apiKey;     // a key given by settings; never stored or shown
    std::string anthropicVersion = "2023-06-01";
    std::string prices;  // a price table file; "" looks for llm/prices.json
    std::string prompts; // a folder of prompt templates that comes first; "" none
    HttpOptions http;
    std::vector<std::string> warnings; // settings that work but may not do what was meant

    // The key to send: apiKey when given, else the named variable's value; "" wherever the rules
    // above forbid sending one (checked again here, whatever built the config).
    std::string key() const;
    // The base URL without credentials: what sessions, logs and messages show.
    std::string publicBaseUrl() const;
    // Everything to scrub from what is kept: the key and the credentials in the URL.
    std::vector<std::string> secrets() const;
};

std::string toString(Protocol); // "openai", "anthropic"

// The protocol's own API ("https://api.openai.com/v1") and the variable its key is read from by default.
std::string defaultBaseUrl(Protocol);
std::string defaultKeyEnv(Protocol);

// Reads settings from JSON (keys as in toJson below; CLI options map onto them one to one),
// starting from the protocol's defaults. Unknown keys, wrong types and combinations the server
// would refuse are errors naming the key. "api_key" is accepted here (settings held by the GUI)
// and never written back.
Result<LlmConfig> configFromJson(Protocol, const nlohmann::json &);
// The settings as the session keeps them: everything but the key and the URL's credentials.
nlohmann::json toJson(const LlmConfig &);

// Replaces every occurrence of `secret` (and of its longer fragments, as servers echo keys in
// part) in `text` by "***", so no key reaches a session, a log or a message.
std::string scrub(std::string text, const std::string &secret);
std::string scrub(std::string text, const std::vector<std::string> &secrets);

} // namespace kf::llm
