#include "settings.h"

#include <QDir>
#include <QFileInfo>

#include <nlohmann/json.hpp>

namespace kf::ui {

namespace key {
const QString RecentFiles = QStringLiteral("session/recentFiles");
const QString ProblemFolders = QStringLiteral("problems/folders");
const QString WorkerCommand = QStringLiteral("engine/workerCommand");
const QString Generator = QStringLiteral("search/generator");
const QString Search = QStringLiteral("search/settings"); // the session JSON form
// Under "generators/<name>/": the fields of a language-model generator.
const QString BaseUrl = QStringLiteral("baseUrl");
const QString Model = QStringLiteral("model");
const QString KeySource = QStringLiteral("keySource");
const QString KeyEnv = QStringLiteral("keyEnv");
const QString KeyFile = QStringLiteral("keyFile");
const QString LastFolder = QStringLiteral("files/lastFolder");
const QString Geometry = QStringLiteral("window/geometry");
const QString State = QStringLiteral("window/state");
const QString StateVersion = QStringLiteral("window/stateVersion");
} // namespace key

Settings::Settings(QObject *parent) : QObject(parent), m_settings(new QSettings(this)) {}

Settings::Settings(const QString &iniFile, QObject *parent)
    : QObject(parent), m_settings(new QSettings(iniFile, QSettings::IniFormat, this))
{
}

QStringList Settings::recentFiles() const { return m_settings->value(key::RecentFiles).toStringList(); }

void Settings::addRecentFile(const QString &path)
{
    const QString abs = QFileInfo(path).absoluteFilePath();
    QStringList files = recentFiles();
    files.removeAll(abs);
    files.prepend(abs);
    while (files.size() > kMaxRecentFiles)
        files.removeLast();
    m_settings->setValue(key::RecentFiles, files);
    emit recentFilesChanged();
}

void Settings::removeRecentFile(const QString &path)
{
    QStringList files = recentFiles();
    if (files.removeAll(QFileInfo(path).absoluteFilePath()) > 0) {
        m_settings->setValue(key::RecentFiles, files);
        emit recentFilesChanged();
    }
}

QStringList Settings::problemFolders() const { return m_settings->value(key::ProblemFolders).toStringList(); }

void Settings::setProblemFolders(const QStringList &folders)
{
    m_settings->setValue(key::ProblemFolders, folders);
    emit problemFoldersChanged();
}

QString Settings::workerCommand() const { return m_settings->value(key::WorkerCommand).toString(); }
void Settings::setWorkerCommand(const QString &c) { m_settings->setValue(key::WorkerCommand, c); }

QString Settings::generator() const { return m_settings->value(key::Generator, QStringLiteral("builtin")).toString(); }
void Settings::setGenerator(const QString &g) { m_settings->setValue(key::Generator, g); }

static QString generatorKey(const QString &generator, const QString &field)
{
    return QStringLiteral("generators/%1/%2").arg(generator, field);
}

GeneratorChoice Settings::generatorChoice(const QString &generator) const
{
    GeneratorChoice c;
    c.name = generator;
    c.baseUrl = m_settings->value(generatorKey(generator, key::BaseUrl)).toString();
    c.model = m_settings->value(generatorKey(generator, key::Model)).toString();
    c.keySource = parseKeySource(m_settings->value(generatorKey(generator, key::KeySource)).toString());
    c.keyEnv = m_settings->value(generatorKey(generator, key::KeyEnv)).toString();
    c.keyFile = m_settings->value(generatorKey(generator, key::KeyFile)).toString();
    return c;
}

void Settings::setGeneratorChoice(const GeneratorChoice &c)
{
    if (!c.asksModel())
        return; // the built-in generator has no fields
    m_settings->setValue(generatorKey(c.name, key::BaseUrl), c.baseUrl);
    m_settings->setValue(generatorKey(c.name, key::Model), c.model);
    m_settings->setValue(generatorKey(c.name, key::KeySource), toString(c.keySource));
    m_settings->setValue(generatorKey(c.name, key::KeyEnv), c.keyEnv);
    m_settings->setValue(generatorKey(c.name, key::KeyFile), c.keyFile);
}

SearchSettings Settings::searchSettings() const
{
    // Stored as the session's JSON, so both read and check values the same way; anything bad
    // gives the defaults rather than a search that cannot start.
    const QByteArray text = m_settings->value(key::Search).toByteArray();
    if (text.isEmpty())
        return {};
    try {
        auto s = settingsFromJson(nlohmann::json::parse(text.toStdString()));
        if (s && s->validate())
            return *s;
    } catch (const std::exception &) {
    }
    return {};
}

void Settings::setSearchSettings(const SearchSettings &s)
{
    m_settings->setValue(key::Search, QByteArray::fromStdString(nlohmann::json(s).dump()));
}

QString Settings::lastFolder() const { return m_settings->value(key::LastFolder, QDir::homePath()).toString(); }
void Settings::setLastFolder(const QString &f) { m_settings->setValue(key::LastFolder, f); }

QByteArray Settings::windowGeometry() const { return m_settings->value(key::Geometry).toByteArray(); }

QByteArray Settings::windowState() const
{
    if (m_settings->value(key::StateVersion).toInt() != kWindowStateVersion)
        return {};
    return m_settings->value(key::State).toByteArray();
}

void Settings::setWindow(const QByteArray &geometry, const QByteArray &state)
{
    m_settings->setValue(key::Geometry, geometry);
    m_settings->setValue(key::State, state);
    m_settings->setValue(key::StateVersion, kWindowStateVersion);
}

} // namespace kf::ui
