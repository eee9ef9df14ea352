#pragma once
// The workbench's settings: every key declared once with its type and default, read and written
// through QSettings. Jobs copy what they need when they start (EngineConfig, SearchSettings), so a
// change never reaches a job that is already running. Saved window state carries a version.
#include "generator_choice.h"
#include "search/settings.h"

#include <QByteArray>
#include <QObject>
#include <QSettings>
#include <QStringList>

namespace kf::ui {

class Settings : public QObject {
    Q_OBJECT
public:
    // Bump when the window's docks or toolbars change, so an older saved layout is ignored.
    static constexpr int kWindowStateVersion = 3;
    static constexpr int kMaxRecentFiles = 10;

    // `settings` defaults to the application's QSettings (organisation and name from main()).
    explicit Settings(QObject *parent = nullptr);
    Settings(const QString &iniFile, QObject *parent); // a file of its own (tests)

    QStringList recentFiles() const;
    void addRecentFile(const QString &path); // most recent first, no duplicates, capped
    void removeRecentFile(const QString &path);

    QStringList problemFolders() const; // folders added to the problem browser
    void setProblemFolders(const QStringList &);

    QString workerCommand() const; // "" = the local kernelforge-worker
    void setWorkerCommand(const QString &);

    QString generator() const; // "builtin"
    void setGenerator(const QString &);
    // The fields of a language-model generator (server, model, where the key is): per generator,
    // as openai and anthropic servers differ. Never a key itself.
    GeneratorChoice generatorChoice(const QString &generator) const;
    void setGeneratorChoice(const GeneratorChoice &);

    SearchSettings searchSettings() const; // the last ones used, defaults otherwise
    void setSearchSettings(const SearchSettings &);

    QString lastFolder() const; // where file dialogs start
    void setLastFolder(const QString &);

    QByteArray windowGeometry() const;
    QByteArray windowState() const; // empty when saved by another layout version
    void setWindow(const QByteArray &geometry, const QByteArray &state);

signals:
    void recentFilesChanged();
    void problemFoldersChanged();

private:
    QSettings *m_settings;
};

} // namespace kf::ui
