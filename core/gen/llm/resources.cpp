#include "gen/llm/resources.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace kf::llm {

namespace {

void addDir(std::vector<std::string> &out, const fs::path &p)
{
    std::error_code ec;
    if (!fs::is_directory(p, ec))
        return;
    std::string s = fs::weakly_canonical(p, ec).string();
    if (ec)
        s = p.string();
    for (const auto &o : out)
        if (o == s)
            return;
    out.push_back(s);
}

} // namespace

std::vector<std::string> resourceSearchPath(const std::string &sub, const std::string &env, const std::string &first)
{
    std::vector<std::string> out;
    if (!first.empty())
        addDir(out, first);
    if (const char *v = std::getenv(env.c_str())) {
        std::stringstream in(v);
        for (std::string part; std::getline(in, part, ':');)
            if (!part.empty())
                addDir(out, part);
    }
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec)
        addDir(out, exe.parent_path() / ".." / "share" / "kernelforge" / sub);
#ifdef KF_SOURCE_RESOURCES_DIR
    addDir(out, fs::path(KF_SOURCE_RESOURCES_DIR) / sub);
#endif
    fs::path dir = fs::current_path(ec);
    while (!ec && !dir.empty()) {
        std::error_code missing;
        if (fs::is_directory(dir / "resources" / sub, missing)) {
            addDir(out, dir / "resources" / sub);
            break;
        }
        if (dir == dir.parent_path())
            break;
        dir = dir.parent_path();
    }
    return out;
}

Result<std::string> readResource(const std::string &sub, const std::string &env, const std::string &name,
                                 const std::string &first)
{
    const auto path = resourceSearchPath(sub, env, first);
    for (const auto &dir : path) {
        std::ifstream in(fs::path(dir) / name, std::ios::binary);
        if (!in)
            continue;
        std::stringstream text;
        text << in.rdbuf();
        return text.str();
    }
    std::string looked;
    for (const auto &d : path)
        looked += (looked.empty() ? "" : ", ") + d;
    return makeError(ErrorCode::Resource,
                     "no " + name + " in " + (looked.empty() ? std::string("any folder") : looked) + "; set " + env +
                         " to the resources/" + sub + " folder");
}

} // namespace kf::llm
