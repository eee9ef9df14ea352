// kernelforge: the workbench window. Wiring only; everything lives in ui/.
#include "engine.h"
#include "main_window.h"
#include "settings.h"

#include <QApplication>
#include <QCommandLineParser>

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("KernelForge"));
    QApplication::setApplicationName(QStringLiteral("kernelforge"));
    QApplication::setApplicationDisplayName(QStringLiteral("KernelForge"));
    QApplication::setApplicationVersion(QStringLiteral(KF_VERSION));
    QApplication::setDesktopFileName(QStringLiteral("kernelforge"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Search for fast CUDA kernels: the KernelForge workbench"));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument(QStringLiteral("session"), QStringLiteral("A session file (.kfsession) to open"));
    parser.process(app);

    kf::ui::Settings settings;
    kf::ui::Engine engine;
    kf::ui::MainWindow window(&settings, &engine);
    window.show();
    if (!parser.positionalArguments().isEmpty())
        window.openSession(parser.positionalArguments().constFirst());
    return app.exec();
}
