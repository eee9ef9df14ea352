#pragma once
// Command-line arguments: positionals and --name value / --flag options.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kf::cli {

struct Args {
    std::string command;
    std::vector<std::string> positional;
    std::map<std::string, std::string> options; // "--policy" -> "strict"
    std::set<std::string> flags;                // "--json"

    std::optional<std::string> option(const std::string &name) const;
    bool flag(const std::string &name) const { return flags.count(name) > 0; }
    int intOption(const std::string &name, int fallback) const;
};

// `valued` names the options that take a value; anything else starting with -- is a flag.
// Returns an error message, or "" on success.
std::string parseArgs(int argc, char **argv, const std::set<std::string> &valued, Args &out);

} // namespace kf::cli
