#include "search/session_setup.h"

namespace kf {

std::string sessionProblemText(const Problem &problem, std::size_t limit)
{
    if (!problem.hasModuleBytes())
        return problem.text;
    const std::size_t whole = problem.text.size() + (problem.module->size() + 2) / 3 * 4;
    if (whole > limit && !problem.path.empty())
        return problem.text; // the file's own text, which names the module file beside it
    return textWithModule(problem);
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
