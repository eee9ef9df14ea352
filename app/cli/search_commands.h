#pragma once
// kernelforge-cli search and report: run or resume a search into a session file with a live
// progress display, and print a session's trajectory table (or CSV).
#include "args.h"
#include "search/settings.h"
#include "util/error.h"

#include <set>
#include <string>
#include <vector>

namespace kf::cli {

// A search stopped by Ctrl-C (128 + SIGINT, as shells report it); the session keeps its results.
inline constexpr int Interrupted = 130;

// The options these commands take a value for, merged into the parser's list by main().
const std::set<std::string> &searchValuedOptions();

// The search settings given as options (--rounds, --policy, --budget, ...) over `s`; false after
// printing what is wrong. Shared with the suite command.
bool applySearchOptions(const Args &, SearchSettings &s);
bool readInt(const Args &, const std::string &name, int &out);
bool parseGpus(const Args &, std::vector<int> &gpus);
// The exit code for an error that stopped a search.
int exitFor(const Error &);

int cmdSearch(const Args &);
int cmdReport(const Args &);
// The LLM exchanges of a session: one line each, or the full prompt and answer of those behind a node.
int cmdExchanges(const Args &);

} // namespace kf::cli
