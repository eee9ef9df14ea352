#include "store/db.h"
#include "store/schema.h"

namespace kf {

using namespace store;

Status SessionStore::setMeta(std::string_view key, std::string_view value)
{
    if (auto e = unusable(true))
        return *e;
    if (key == session_meta::Format)
        return d->err(ErrorCode::Invalid, "meta \"format\" belongs to the store");
    if (key.empty())
        return d->err(ErrorCode::Invalid, "empty meta key");
    Stmt s(d->db.get(), insertSql(kMeta) + " ON CONFLICT(key) DO UPDATE SET value = excluded.value");
    s.bind(param(kMeta, "key"), key).bind(param(kMeta, "value"), value);
    const int rc = s.step();
    if (rc != SQLITE_DONE)
        return d->error(rc, "cannot write meta \"" + std::string(key) + "\"");
    return Ok{};
}

Status SessionStore::setMetaJson(std::string_view key, const nlohmann::json &value)
{
    return setMeta(key, dumpJson(value));
}

Result<std::string> SessionStore::meta(std::string_view key) const
{
    if (auto e = unusable(false))
        return *e;
    Stmt s(d->db.get(), "SELECT value FROM meta WHERE key = ?");
    s.bind(1, key);
    const int rc = s.step();
    if (rc == SQLITE_ROW)
        return s.text(0);
    if (rc == SQLITE_DONE)
        return d->err(ErrorCode::NotFound, "no meta \"" + std::string(key) + "\"");
    return d->error(rc, "cannot read meta");
}

Result<nlohmann::json> SessionStore::metaJson(std::string_view key) const
{
    auto text = meta(key);
    if (!text)
        return text.error();
    auto j = parseJson(*text);
    if (!j)
        return d->err(ErrorCode::Damaged, "damaged: meta \"" + std::string(key) + "\" is not JSON");
    return *j;
}

Result<std::map<std::string, std::string>> SessionStore::allMeta() const
{
    if (auto e = unusable(false))
        return *e;
    Stmt s(d->db.get(), selectSql(kMeta) + " ORDER BY key");
    std::map<std::string, std::string> out;
    int rc;
    while ((rc = s.step()) == SQLITE_ROW)
        out[s.text(column(kMeta, "key"))] = s.text(column(kMeta, "value"));
    if (rc != SQLITE_DONE)
        return d->error(rc, "cannot read meta");
    return out;
}

Result<SessionMeta> SessionStore::sessionMeta() const
{
    auto all = allMeta();
    if (!all)
        return all.error();
    const auto get = [&](std::string_view key) -> std::string {
        auto it = all->find(std::string(key));
        return it == all->end() ? std::string() : it->second;
    };
    SessionMeta m;
    m.created = get(session_meta::Created);
    m.writer = get(session_meta::Writer);
    m.problemName = get(session_meta::ProblemName);
    m.problemText = get(session_meta::ProblemText);
    m.problemVariant = get(session_meta::ProblemVariant);
    m.generator = get(session_meta::Generator);
    m.gpuName = get(session_meta::Gpu);
    const std::string settings = get(session_meta::Settings);
    if (!settings.empty()) {
        auto j = parseJson(settings);
        if (!j)
            return d->err(ErrorCode::Damaged, "damaged: meta \"settings\" is not JSON");
        m.settings = std::move(*j);
    }
    if (all->count(std::string(session_meta::Baseline))) {
        auto j = parseJson(get(session_meta::Baseline));
        if (!j)
            return d->err(ErrorCode::Damaged, "damaged: meta \"baseline\" is not JSON");
        m.baseline = std::move(*j);
    }
    return m;
}

} // namespace kf
