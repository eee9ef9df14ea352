#pragma once
// The generator a search starts with, as the search panel and the settings hold it: its name and,
// for the language-model generators, the server, the model and where the key comes from. A key
// itself is never held here, in the settings or in a session: an environment variable is read by
// the generator, and a key file only when a search starts, on the engine's thread.
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <QString>

namespace kf::ui {

enum class KeySource { Environment, File, None };
QString toString(KeySource);               // "environment", "file", "none"
KeySource parseKeySource(const QString &); // anything else: Environment

struct GeneratorChoice {
    QString name = QStringLiteral("builtin");
    QString baseUrl; // "" : the protocol's default server
    QString model;
    KeySource keySource = KeySource::Environment;
    QString keyEnv; // "" : the protocol's variable (OPENAI_API_KEY, ...)
    QString keyFile;

    // The choice of a generator with nothing filled in yet.
    static GeneratorChoice named(const QString &name)
    {
        GeneratorChoice c;
        c.name = name;
        return c;
    }
    // openai or anthropic: the generators that ask a model and take the fields above.
    bool asksModel() const;
    // The generator settings as kernelforge-cli's --base-url, --model and --key-env give them
    // (docs/llm.md); null for the built-in generator. Fields left empty keep the defaults.
    nlohmann::json settingsJson() const;
    QString defaultKeyEnv() const;
    QString defaultBaseUrl() const;
    // The variable read when keyEnv is left empty: the provider's own (defaultKeyEnv) for its own
    // API over HTTPS, none for any other server, where the key must be named.
    QString impliedKeyEnv() const;

    bool operator==(const GeneratorChoice &) const = default;
};

// A field of the choice that cannot work, and why, for the message beside the field.
struct ChoiceProblem {
    enum class Field { None, Endpoint, Model, Key, Other };
    Field field = Field::None;
    QString message; // names the field: "Model: is needed (...)"
    explicit operator bool() const { return field != Field::None; }
};

// Checks the choice with the generator's own settings reader (core/gen/llm/config.h), which also
// decides where a key may go, then what only a person at this machine can fix: a URL without a
// host, an unset key variable, a key file that is not there. Reads no file contents, so it may run
// on every keystroke.
ChoiceProblem checkChoice(const GeneratorChoice &);

// The choice's fields taken from a session's stored generator settings (meta generator_settings),
// so that opening a session shows the server and model it used. The key source stays the user's.
GeneratorChoice withSessionSettings(GeneratorChoice, const nlohmann::json &stored);

// What a search's generator is made with: the session's stored settings when the session was made
// by the same generator, the choice's settings on top (as the CLI puts options over a resumed
// session's), and the key file's contents as api_key. Reads the key file: call it off the GUI
// thread. The result holds the key; it is handed to the generator and nowhere else.
struct GeneratorRequest {
    std::string name = "builtin";
    nlohmann::json settings; // settingsJson()
    std::string keyFile;     // "" unless the key comes from a file
};
GeneratorRequest toRequest(const GeneratorChoice &);
Result<nlohmann::json> generatorSettings(const GeneratorRequest &, const std::string &sessionGenerator,
                                         const nlohmann::json &stored);

} // namespace kf::ui
