#include "support.h"

#include <QFile>
#include <QTest>

#include <regex>

namespace kf::test {

WorkerConfig workerConfig()
{
    WorkerConfig c;
    c.argv = defaultWorkerArgv(); // KERNELFORGE_WORKER, set by CTest to the built worker
    return c;
}

Problem seedProblem(const std::string &name, const std::string &variant)
{
    auto p = findProblem(name, variant);
    if (!p)
        qFatal("cannot load problem %s: %s", name.c_str(), p.error().text().c_str());
    return *p;
}

std::string readText(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(path));
    return f.readAll().toStdString();
}

std::string expectation(const std::string &source, const std::string &key)
{
    std::smatch m;
    const std::regex re("//\\s*@" + key + "\\s+([^\\n]+?)\\s*\\n");
    return std::regex_search(source, m, re) ? m[1].str() : std::string();
}

bool workerHasGpu(std::string *reason)
{
    WorkerClient w(workerConfig());
    if (Status s = w.start(); !s) {
        *reason = s.error().text();
        return false;
    }
    *reason = w.info()->gpu.reason;
    return w.info()->gpu.present;
}

} // namespace kf::test
