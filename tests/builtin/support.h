#pragma once
// Fixtures of the built-in generator's tests: the shipped problems and their op graphs as the
// worker reports them (tests/builtin/data/graphs.json), and small hand-built graphs.
#include "eval/protocol.h"
#include "gen/generator.h"
#include "problem/problem.h"

#include <QString>
#include <QStringList>

#include <string>
#include <vector>

namespace kf::test {

using Shape = std::vector<std::int64_t>;

// "seed/softmax", "level1/relu", ... : every problem in graphs.json.
QStringList shippedNames();
// The worker's op graph of a shipped problem (recorded at the small size; the recogniser takes
// sizes from the problem, so it serves every variant).
std::vector<OpNode> shippedGraph(const QString &name);
// The shipped problem at a variant ("" for the full size).
Problem shippedProblem(const QString &name, const std::string &variant = {});

// The problems of tests/builtin/data/problems (patterns the shipped set lacks: losses, norms around
// a reduction, pooling, scans, matrix-vector products) by file stem, and their op graphs as the
// worker reports them at the small variant (tests/builtin/data/problem_graphs.json).
QStringList ownNames();
std::vector<OpNode> ownGraph(const QString &name);
Problem ownProblem(const QString &name, const std::string &variant = {});

// One node of a hand-built graph.
OpNode node(const std::string &op, std::vector<std::string> inputs, std::vector<std::string> outputs,
            std::vector<Shape> inputShapes, std::vector<Shape> outputShapes, nlohmann::json constants);

// A problem from TOML text (fails the test when it does not parse).
Problem problemFromToml(const std::string &text);

// A generator context for a problem and its graph on an H200-like GPU, nothing measured yet.
GenContext contextFor(const Problem &, const std::vector<OpNode> &graph);

// Points the tests at the source tree's templates.
void useSourceTemplates();

} // namespace kf::test
