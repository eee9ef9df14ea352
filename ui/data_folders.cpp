#include "data_folders.h"

#include "problem/problem.h"

#include <QCoreApplication>
#include <QFileInfo>

#include <algorithm>

namespace kf::ui {

namespace {

void addFolder(QStringList &out, const QString &dir)
{
    const QString canonical = QFileInfo(dir).canonicalFilePath();
    if (!canonical.isEmpty() && QFileInfo(canonical).isDir() && !out.contains(canonical))
        out << canonical;
}

QString installed(const QString &sub)
{
    return QCoreApplication::applicationDirPath() + QStringLiteral("/../share/") + sub;
}

} // namespace

QStringList exampleFolders()
{
    QStringList out;
    addFolder(out, qEnvironmentVariable("KERNELFORGE_EXAMPLES"));
    addFolder(out, installed(QStringLiteral("kernelforge/examples")));
#ifdef KF_SOURCE_EXAMPLES
    addFolder(out, QStringLiteral(KF_SOURCE_EXAMPLES));
#endif
    return out;
}

bool isShippedExample(const QString &path)
{
    const QString dir = QFileInfo(QFileInfo(path).canonicalFilePath()).absolutePath();
    return exampleFolders().contains(dir);
}

std::vector<std::string> shippedProblemFolders()
{
    std::vector<std::string> out = problemSearchPath();
#ifdef KF_SOURCE_PROBLEMS
    // A build that runs from its build folder, started from anywhere: the source tree's problems.
    const QString source = QFileInfo(QStringLiteral(KF_SOURCE_PROBLEMS)).canonicalFilePath();
    if (!source.isEmpty() && std::none_of(out.begin(), out.end(), [&](const std::string &d) {
            return QFileInfo(QString::fromStdString(d)).canonicalFilePath() == source;
        }))
        out.push_back(source.toStdString());
#endif
    return out;
}

QString documentationFile(const QString &name)
{
    QStringList places{installed(QStringLiteral("doc/kernelforge/")) + name};
#ifdef KF_SOURCE_ROOT
    places << QStringLiteral(KF_SOURCE_ROOT "/") + name << QStringLiteral(KF_SOURCE_ROOT "/docs/") + name;
#endif
    for (const QString &p : places)
        if (QFileInfo(p).isFile())
            return QFileInfo(p).canonicalFilePath();
    return {};
}

} // namespace kf::ui
