#pragma once
// Helpers shared by the workbench tests: a window with settings of its own, opening a shipped
// example session, and waiting for the engine.
#include "engine.h"
#include "main_window.h"
#include "model/outline_model.h"
#include "settings.h"

#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <memory>

namespace kf::ui::test {

inline QString examplePath(const QString &name)
{
    return QStringLiteral(KF_SOURCE_DIR "/resources/examples/%1.kfsession").arg(name);
}

// A main window over a fresh engine, with settings in a temporary folder.
struct Workbench {
    QTemporaryDir dir;
    std::unique_ptr<Settings> settings;
    std::unique_ptr<Engine> engine;
    std::unique_ptr<MainWindow> window;

    Workbench()
    {
        settings = std::make_unique<Settings>(dir.filePath(QStringLiteral("settings.ini")), nullptr);
        engine = std::make_unique<Engine>();
        window = std::make_unique<MainWindow>(settings.get(), engine.get());
    }
    ~Workbench()
    {
        window.reset(); // before the engine it uses
        engine.reset();
    }

    // Opens a session and waits until the window shows it.
    bool open(const QString &path, int timeoutMs = 20000)
    {
        QSignalSpy opened(engine.get(), &Engine::sessionOpened);
        window->openSession(path);
        return opened.wait(timeoutMs) || opened.count() > 0;
    }
    // Shows the window (at `size`, when given) and opens a shipped example in it: true once the
    // window shows it with a node selected.
    bool showExample(const QString &name, QSize size = {})
    {
        if (size.isValid())
            window->resize(size);
        window->show();
        return QTest::qWaitForWindowExposed(window.get()) && open(examplePath(name)) &&
            QTest::qWaitFor([this] { return window->selectedNode() != 0; }, 10000);
    }
    // Runs the worker of `argv` (the fake worker, say) from now on and asks it for its GPU.
    void useWorker(const std::vector<std::string> &argv)
    {
        EngineConfig config;
        config.workerArgv = argv;
        engine->setConfig(config);
        engine->probeGpu();
    }
    bool waitForGpuProbe(int timeoutMs = 60000)
    {
        if (engine->gpu().checked)
            return true;
        QSignalSpy checked(engine.get(), &Engine::gpuChecked);
        return checked.wait(timeoutMs) || engine->gpu().checked;
    }
};

} // namespace kf::ui::test
