#pragma once
// kernelforge-cli suite: a search on every problem of a folder, resumable, with a report
// (docs/kernelbench.md); and coverage: what the built-in generator can do with each problem.
#include "args.h"

#include <set>
#include <string>

namespace kf::cli {

const std::set<std::string> &suiteValuedOptions();

int cmdSuite(const Args &);
int cmdCoverage(const Args &);

} // namespace kf::cli
