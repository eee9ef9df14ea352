#pragma once
// Generators by name, for the CLI and the GUI's settings: "builtin" (the default, no network),
// "openai" (any OpenAI-compatible Chat Completions server) and "anthropic" (Messages API).
#include "gen/generator.h"

#include <memory>
#include <string>
#include <vector>

namespace kf {

// The generator called `name`, or nullptr when there is none by that name or it is not part of
// this build; `error`, when given, then says why in one sentence.
std::shared_ptr<Generator> makeGenerator(const std::string &name, std::string *error = nullptr);
// The same with the generator's own settings (Generator::settings(): server, model, ...; see
// core/gen/llm/config.h). Generators without settings ignore them.
std::shared_ptr<Generator> makeGenerator(const std::string &name, const nlohmann::json &settings,
                                         std::string *error = nullptr);

// The names makeGenerator() knows, whether or not this build has them.
std::vector<std::string> generatorNames();

} // namespace kf
