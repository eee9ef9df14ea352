#include "generator_options.h"

#include "commands.h"
#include "gen/llm/llm_generator.h"

#include <cstdio>

namespace kf::cli {

namespace {

enum class Kind { Text, Integer, Number, OnOff };

struct Option {
    const char *flag, *key;
    Kind kind;
};

// One line per setting of core/gen/llm/config.h.
constexpr Option kOptions[] = {
    {"--base-url", "base_url", Kind::Text},
    {"--model", "model", Kind::Text},
    {"--temperature", "temperature", Kind::Number},
    {"--max-tokens", "max_tokens", Kind::Integer},
    {"--max-tokens-field", "max_tokens_field", Kind::Text},
    {"--reasoning-effort", "reasoning_effort", Kind::Text},
    {"--thinking", "thinking", Kind::Text},
    {"--thinking-budget", "thinking_budget", Kind::Integer},
    {"--stream", "stream", Kind::OnOff},
    {"--key-env", "key_env", Kind::Text},
    {"--concurrency", "concurrency", Kind::Integer},
    {"--timeout", "timeout_s", Kind::Number},
    {"--max-time", "max_time_s", Kind::Number},
    {"--connect-timeout", "connect_timeout_s", Kind::Number},
    {"--retries", "retries", Kind::Integer},
    {"--prices", "prices", Kind::Text},
    {"--prompts", "prompts", Kind::Text},
};

} // namespace

const std::set<std::string> &generatorValuedOptions()
{
    static const std::set<std::string> names = [] {
        std::set<std::string> s;
        for (const Option &o : kOptions)
            s.insert(o.flag);
        return s;
    }();
    return names;
}

bool generatorSettings(const Args &a, const nlohmann::json &stored, nlohmann::json &out)
{
    out = stored.is_object() ? stored : nlohmann::json::object();
    for (const Option &o : kOptions) {
        auto v = a.option(o.flag);
        if (!v)
            continue;
        if (o.kind == Kind::Text) {
            out[o.key] = *v;
            continue;
        }
        // "default" drops a value a resumed session stored (its temperature, say), so the
        // server's or the protocol's default applies again.
        if (*v == "default") {
            out.erase(o.key);
            continue;
        }
        if (o.kind == Kind::OnOff) {
            if (*v != "on" && *v != "off") {
                std::fprintf(stderr, "kernelforge-cli: %s is on or off, not '%s'\n", o.flag, v->c_str());
                return false;
            }
            out[o.key] = *v == "on";
            continue;
        }
        try {
            std::size_t used = 0;
            if (o.kind == Kind::Integer) {
                const long long n = std::stoll(*v, &used);
                if (used == v->size()) {
                    out[o.key] = n;
                    continue;
                }
            } else {
                const double d = std::stod(*v, &used);
                if (used == v->size()) {
                    out[o.key] = d;
                    continue;
                }
            }
        } catch (const std::exception &) {
        }
        std::fprintf(stderr, "kernelforge-cli: %s needs a number (or default), not '%s'\n", o.flag, v->c_str());
        return false;
    }
    return true;
}

int cmdModels(const Args &a)
{
    const std::string name = a.option("--generator").value_or("openai");
    if (name != "openai" && name != "anthropic") {
        std::fprintf(stderr, "kernelforge-cli: models lists the models of an openai or anthropic server, not of %s\n",
                     name.c_str());
        return BadInput;
    }
    nlohmann::json settings;
    if (!generatorSettings(a, nullptr, settings))
        return BadInput;
    // Listing needs no model; the settings check wants one, so a placeholder stands in.
    if (!settings.contains("model"))
        settings["model"] = "-";
    auto g = llm::LlmGenerator::make(name == "openai" ? llm::Protocol::OpenAI : llm::Protocol::Anthropic, settings);
    if (!g) {
        std::fprintf(stderr, "kernelforge-cli: %s\n", g.error().text().c_str());
        return BadInput;
    }
    printGeneratorWarnings(**g);
    auto models = (*g)->listModels();
    if (!models) {
        std::fprintf(stderr, "kernelforge-cli: %s\n", models.error().text().c_str());
        return GeneratorFailed;
    }
    for (const auto &m : *models)
        std::printf("%s\n", m.c_str());
    return Success;
}

void printGeneratorWarnings(const llm::LlmGenerator &g)
{
    for (const auto &w : g.config().warnings)
        std::fprintf(stderr, "kernelforge-cli: warning: %s\n", w.c_str());
}

} // namespace kf::cli
