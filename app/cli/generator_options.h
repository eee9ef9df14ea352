#pragma once
// The LLM generators' command-line options (--base-url, --model, ...) as generator settings JSON
// (core/gen/llm/config.h), merged over a resumed session's stored settings; and the `models`
// command, which lists what a server offers.
#include "args.h"

#include <nlohmann/json.hpp>

#include <set>
#include <string>

namespace kf::llm {
class LlmGenerator;
}

namespace kf::cli {

const std::set<std::string> &generatorValuedOptions();

// `stored` (a resumed session's settings, or null) with the options given now on top; an option
// given as "default" removes the stored value. Returns false after printing an error for a
// malformed number or switch.
bool generatorSettings(const Args &, const nlohmann::json &stored, nlohmann::json &out);

int cmdModels(const Args &);

// Prints the settings that work but may not do what was meant ("kernelforge-cli: warning: ...").
void printGeneratorWarnings(const kf::llm::LlmGenerator &);

} // namespace kf::cli
