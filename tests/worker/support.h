#pragma once
// Shared by the worker tests: the worker under test, problems by name, candidate metadata.
#include "eval/worker_client.h"
#include "problem/problem.h"

#include <QString>
#include <string>

namespace kf::test {

WorkerConfig workerConfig();
Problem seedProblem(const std::string &name, const std::string &variant = {});
std::string readText(const QString &path);
// `// @expect VERDICT` and `// @problem NAME` lines of a test kernel.
std::string expectation(const std::string &source, const std::string &key);
// Whether the worker reports a usable GPU; `reason` says why not.
bool workerHasGpu(std::string *reason);

} // namespace kf::test
