#include "support.h"

#include <QFile>
#include <QtTest>

#include <map>

namespace kf::test {

namespace {

nlohmann::json readJson(const char *path)
{
    QFile f(QString::fromUtf8(path));
    if (!f.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", path);
    return nlohmann::json::parse(f.readAll().toStdString());
}

const nlohmann::json &graphs()
{
    static const nlohmann::json all = readJson(KF_SOURCE_DIR "/tests/builtin/data/graphs.json");
    return all;
}

const nlohmann::json &ownGraphs()
{
    static const nlohmann::json all = readJson(KF_SOURCE_DIR "/tests/builtin/data/problem_graphs.json");
    return all;
}

} // namespace

QStringList shippedNames()
{
    QStringList names;
    for (const auto &[name, g] : graphs().items())
        names << QString::fromStdString(name);
    return names;
}

std::vector<OpNode> shippedGraph(const QString &name)
{
    return graphs().at(name.toStdString()).get<std::vector<OpNode>>();
}

Problem shippedProblem(const QString &name, const std::string &variant)
{
    auto p = loadProblemFile(KF_SOURCE_DIR "/problems/" + name.toStdString() + ".toml", variant);
    if (!p)
        qFatal("%s", p.error().text().c_str());
    return *p;
}

QStringList ownNames()
{
    QStringList names;
    for (const auto &[name, g] : ownGraphs().items())
        names << QString::fromStdString(name);
    return names;
}

std::vector<OpNode> ownGraph(const QString &name)
{
    return ownGraphs().at(name.toStdString()).get<std::vector<OpNode>>();
}

Problem ownProblem(const QString &name, const std::string &variant)
{
    auto p = loadProblemFile(KF_SOURCE_DIR "/tests/builtin/data/problems/" + name.toStdString() + ".toml", variant);
    if (!p)
        qFatal("%s", p.error().text().c_str());
    return *p;
}

OpNode node(const std::string &op, std::vector<std::string> inputs, std::vector<std::string> outputs,
            std::vector<Shape> inputShapes, std::vector<Shape> outputShapes, nlohmann::json constants)
{
    OpNode n;
    n.op = op;
    n.inputs = std::move(inputs);
    n.outputs = std::move(outputs);
    n.inputShapes = std::move(inputShapes);
    n.outputShapes = std::move(outputShapes);
    n.constants = std::move(constants);
    return n;
}

Problem problemFromToml(const std::string &text)
{
    auto p = parseProblem(text, "test.toml");
    if (!p)
        qFatal("%s", p.error().text().c_str());
    return *p;
}

GenContext contextFor(const Problem &p, const std::vector<OpNode> &graph)
{
    GenContext ctx;
    ctx.problem = p;
    ctx.loaded.graph = graph;
    ctx.loaded.bytes = p.bytes();
    ctx.gpu.present = true;
    ctx.gpu.name = "NVIDIA H200";
    ctx.gpu.arch = "sm_90a";
    ctx.gpu.major = 9;
    ctx.gpu.sms = 132;
    ctx.ceilings.bandwidthGBs = 4000;
    Timing eager;
    eager.medianMs = 1.0;
    ctx.eager = eager;
    return ctx;
}

void useSourceTemplates() { qputenv("KERNELFORGE_TEMPLATES", QByteArrayLiteral(KF_SOURCE_DIR "/resources/templates")); }

} // namespace kf::test
