#include "gen/factory.h"

// The built-in generator is its own part of the engine; a build without it still runs every
// command that needs no generator, and says so for the ones that do.
#if __has_include("gen/builtin/builtin_generator.h")
#include "gen/builtin/builtin_generator.h"
#define KF_HAVE_BUILTIN_GENERATOR 1
#endif

#include "gen/llm/llm_generator.h"

namespace kf {

std::vector<std::string> generatorNames() { return {"builtin", "openai", "anthropic"}; }

std::shared_ptr<Generator> makeGenerator(const std::string &name, std::string *error)
{
    return makeGenerator(name, nullptr, error);
}

std::shared_ptr<Generator> makeGenerator(const std::string &name, const nlohmann::json &settings, std::string *error)
{
    auto fail = [&](std::string why) -> std::shared_ptr<Generator> {
        if (error)
            *error = std::move(why);
        return nullptr;
    };
    if (name == "builtin" || name.empty()) {
#ifdef KF_HAVE_BUILTIN_GENERATOR
        if (auto g = builtin::makeBuiltinGenerator())
            return g;
#endif
        return fail("the built-in generator is not available in this build");
    }
    if (name == "openai" || name == "anthropic") {
        auto g = llm::LlmGenerator::make(name == "openai" ? llm::Protocol::OpenAI : llm::Protocol::Anthropic, settings);
        if (!g)
            return fail(g.error().text());
        return *g;
    }
    std::string known;
    for (const auto &n : generatorNames())
        known += (known.empty() ? "" : ", ") + n;
    return fail("no generator called \"" + name + "\" (known: " + known + ")");
}

} // namespace kf
