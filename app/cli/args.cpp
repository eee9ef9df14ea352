#include "args.h"

namespace kf::cli {

std::optional<std::string> Args::option(const std::string &name) const
{
    auto it = options.find(name);
    if (it == options.end())
        return std::nullopt;
    return it->second;
}

int Args::intOption(const std::string &name, int fallback) const
{
    auto v = option(name);
    return v ? std::stoi(*v) : fallback;
}

std::string parseArgs(int argc, char **argv, const std::set<std::string> &valued, Args &out)
{
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a.rfind("--", 0) == 0 || a == "-o") {
            std::string name = a == "-o" ? "--output" : a, value;
            if (auto eq = name.find('='); eq != std::string::npos) {
                value = name.substr(eq + 1);
                name = name.substr(0, eq);
                if (!valued.count(name))
                    return "option " + name + " takes no value";
                out.options[name] = value;
                continue;
            }
            if (valued.count(name)) {
                if (i + 1 >= argc)
                    return "option " + name + " needs a value";
                out.options[name] = argv[++i];
            } else {
                out.flags.insert(name);
            }
        } else if (out.command.empty()) {
            out.command = a;
        } else {
            out.positional.push_back(a);
        }
    }
    for (const auto &[name, value] : out.options) {
        if (name == "--trials" || name == "--timing-trials") {
            try {
                if (std::stoi(value) < 1)
                    return name + " must be at least 1";
            } catch (const std::exception &) {
                return name + " needs a number, not '" + value + "'";
            }
        }
    }
    return {};
}

} // namespace kf::cli
