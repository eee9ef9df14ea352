#include "generator_choice.h"

#include "gen/llm/config.h"
#include "model/format.h"

#include <QFileInfo>
#include <QUrl>

#include <fstream>
#include <optional>
#include <sstream>

namespace kf::ui {

namespace {

llm::Protocol protocolOf(const QString &name)
{
    return name == QLatin1String("anthropic") ? llm::Protocol::Anthropic : llm::Protocol::OpenAI;
}

QString label(ChoiceProblem::Field f)
{
    switch (f) {
    case ChoiceProblem::Field::Endpoint:
        return QObject::tr("Endpoint URL");
    case ChoiceProblem::Field::Model:
        return QObject::tr("Model");
    case ChoiceProblem::Field::Key:
        return QObject::tr("API key");
    default:
        return QObject::tr("Generator settings");
    }
}

ChoiceProblem problem(ChoiceProblem::Field f, const QString &what)
{
    return {f, QStringLiteral("%1: %2").arg(label(f), what)};
}

// The settings reader names the key first ("generator setting model is needed ..."): that key
// says which field the message belongs beside.
ChoiceProblem fromSettingsError(const std::string &message)
{
    static const std::string prefix = "generator setting ";
    if (message.rfind(prefix, 0) != 0)
        return problem(ChoiceProblem::Field::Other, qs(message));
    const std::size_t end = message.find(' ', prefix.size());
    const std::string key = message.substr(prefix.size(), end - prefix.size());
    const QString rest = end == std::string::npos ? QString() : qs(message.substr(end + 1));
    const ChoiceProblem::Field f = key == "base_url" ? ChoiceProblem::Field::Endpoint
        : key == "model"                             ? ChoiceProblem::Field::Model
        : key == "key_env" || key == "api_key"       ? ChoiceProblem::Field::Key
                                                     : ChoiceProblem::Field::Other;
    return problem(f, f == ChoiceProblem::Field::Other ? qs(message) : rest);
}

} // namespace

QString toString(KeySource s)
{
    switch (s) {
    case KeySource::File:
        return QStringLiteral("file");
    case KeySource::None:
        return QStringLiteral("none");
    default:
        return QStringLiteral("environment");
    }
}

KeySource parseKeySource(const QString &s)
{
    if (s == QLatin1String("file"))
        return KeySource::File;
    if (s == QLatin1String("none"))
        return KeySource::None;
    return KeySource::Environment;
}

bool GeneratorChoice::asksModel() const
{
    return name == QLatin1String("openai") || name == QLatin1String("anthropic");
}

QString GeneratorChoice::defaultKeyEnv() const
{
    return asksModel() ? qs(llm::defaultKeyEnv(protocolOf(name))) : QString();
}

QString GeneratorChoice::defaultBaseUrl() const
{
    return asksModel() ? qs(llm::defaultBaseUrl(protocolOf(name))) : QString();
}

QString GeneratorChoice::impliedKeyEnv() const
{
    if (!asksModel())
        return {};
    nlohmann::json j = {{"model", "-"}}; // the reader wants one
    if (!baseUrl.trimmed().isEmpty())
        j["base_url"] = baseUrl.trimmed().toStdString();
    auto c = llm::configFromJson(protocolOf(name), j);
    return c ? qs(c->keyEnv) : QString();
}

nlohmann::json GeneratorChoice::settingsJson() const
{
    if (!asksModel())
        return nullptr;
    nlohmann::json j = nlohmann::json::object();
    if (!baseUrl.trimmed().isEmpty())
        j["base_url"] = baseUrl.trimmed().toStdString();
    j["model"] = model.trimmed().toStdString();
    if (keySource == KeySource::None)
        j["key_env"] = ""; // the generator then sends no key, which is what local servers want
    else if (keySource == KeySource::Environment && !keyEnv.trimmed().isEmpty())
        j["key_env"] = keyEnv.trimmed().toStdString();
    return j;
}

ChoiceProblem checkChoice(const GeneratorChoice &c)
{
    using Field = ChoiceProblem::Field;
    if (!c.asksModel())
        return {};
    nlohmann::json settings = c.settingsJson();
    if (c.keySource == KeySource::File)
        settings["api_key"] = "-"; // stands for the file's key, so that where it would go is checked now
    auto config = llm::configFromJson(protocolOf(c.name), settings);
    if (!config)
        return fromSettingsError(config.error().message);
    const QUrl url(qs(config->baseUrl), QUrl::StrictMode);
    if (!url.isValid() || url.host().isEmpty())
        return problem(Field::Endpoint,
                       QObject::tr("“%1” is not a URL with a host name").arg(qs(config->publicBaseUrl())));
    switch (c.keySource) {
    case KeySource::Environment: {
        const QString var = qs(config->keyEnv);
        if (var.isEmpty()) // left empty, for a server that is not the provider's own API
            return problem(Field::Key,
                           QObject::tr("name the environment variable that holds the key for %1 (%2 is "
                                       "sent only to %3), or choose “none” for a server that needs no key")
                               .arg(url.host(), c.defaultKeyEnv(), QUrl(c.defaultBaseUrl()).host()));
        if (qEnvironmentVariableIsEmpty(var.toLocal8Bit().constData()))
            return problem(Field::Key,
                           QObject::tr("the environment variable %1 is not set (choose “none” for a "
                                       "local server that needs no key)")
                               .arg(var));
        break;
    }
    case KeySource::File: {
        const QFileInfo f(c.keyFile.trimmed());
        if (c.keyFile.trimmed().isEmpty())
            return problem(Field::Key, QObject::tr("choose the file that holds the key"));
        if (!f.isFile())
            return problem(Field::Key, QObject::tr("there is no file %1").arg(c.keyFile));
        if (!f.isReadable())
            return problem(Field::Key, QObject::tr("%1 cannot be read").arg(c.keyFile));
        break;
    }
    case KeySource::None:
        // The hosted APIs refuse every request without a key.
        if (url.host() == QLatin1String("api.openai.com") || url.host() == QLatin1String("api.anthropic.com"))
            return problem(Field::Key, QObject::tr("%1 needs a key").arg(url.host()));
        break;
    }
    return {};
}

GeneratorChoice withSessionSettings(GeneratorChoice c, const nlohmann::json &stored)
{
    if (!c.asksModel() || !stored.is_object())
        return c;
    auto text = [&](const char *key) -> std::optional<QString> {
        auto it = stored.find(key);
        return it != stored.end() && it->is_string() ? std::optional(qs(it->get<std::string>())) : std::nullopt;
    };
    if (auto v = text("base_url"))
        c.baseUrl = *v == c.defaultBaseUrl() ? QString() : *v;
    if (auto v = text("model"))
        c.model = *v;
    if (auto v = text("key_env"); v && c.keySource != KeySource::File) {
        c.keySource = v->isEmpty() ? KeySource::None : KeySource::Environment;
        c.keyEnv = *v == c.defaultKeyEnv() ? QString() : *v;
    }
    return c;
}

GeneratorRequest toRequest(const GeneratorChoice &c)
{
    GeneratorRequest r;
    r.name = c.name.isEmpty() ? std::string("builtin") : c.name.toStdString();
    r.settings = c.settingsJson();
    if (c.asksModel() && c.keySource == KeySource::File)
        r.keyFile = c.keyFile.trimmed().toStdString();
    return r;
}

Result<nlohmann::json> generatorSettings(const GeneratorRequest &r, const std::string &sessionGenerator,
                                         const nlohmann::json &stored)
{
    if (r.settings.is_null() && r.keyFile.empty())
        return nlohmann::json(nullptr); // the built-in generator has no settings
    nlohmann::json out = sessionGenerator == r.name && stored.is_object() ? stored : nlohmann::json::object();
    if (r.settings.is_object())
        for (const auto &[k, v] : r.settings.items())
            out[k] = v;
    if (!r.keyFile.empty()) {
        std::ifstream in(r.keyFile);
        if (!in)
            return makeError(ErrorCode::Io, "cannot read the key file " + r.keyFile);
        std::stringstream text;
        text << in.rdbuf();
        std::string key = text.str();
        // Files written by `echo` end with a newline, which is no part of the key.
        const auto first = key.find_first_not_of(" \t\r\n");
        const auto last = key.find_last_not_of(" \t\r\n");
        key = first == std::string::npos ? std::string() : key.substr(first, last - first + 1);
        if (key.empty())
            return makeError(ErrorCode::Io, "the key file " + r.keyFile + " is empty");
        out["api_key"] = key;
    }
    return out;
}

} // namespace kf::ui
