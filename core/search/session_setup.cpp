#include "search/session_setup.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace kf {

std::string sessionProblemText(const Problem &problem, std::size_t limit)
{
    if (!problem.isModule() || problem.text.size() <= limit || problem.path.empty())
        return problem.text;
    std::ifstream in(problem.path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return in && !text.str().empty() ? text.str() : problem.text;
}

SessionMeta sessionMetaFor(const Problem &problem, const std::string &generator, const std::string &writer)
{
    SessionMeta meta;
    meta.problemName = problem.name;
    meta.problemText = sessionProblemText(problem);
    meta.problemVariant = problem.variant;
    meta.generator = generator;
    meta.writer = writer;
    return meta;
}

Result<SessionStore> openOrCreateSession(const std::string &path, const SessionMeta &meta)
{
    std::error_code ec;
    return std::filesystem::exists(path, ec) ? SessionStore::open(path) : SessionStore::create(path, meta);
}

} // namespace kf
