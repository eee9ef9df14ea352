// What happened: log lines, per node or session-wide, and the session's events.
#include "store/db.h"
#include "store/schema.h"

namespace kf {

using namespace store;

Result<std::int64_t> SessionStore::appendLog(std::optional<std::int64_t> node, std::string_view text)
{
    if (auto e = unusable(true))
        return *e;
    Stmt s(d->db.get(), insertSql(kLogs));
    s.bindOptional(param(kLogs, "node"), node)
        .bind(param(kLogs, "time"), isoTimeNow())
        .bind(param(kLogs, "text"), text);
    const int rc = s.step();
    if ((rc & 0xff) == SQLITE_CONSTRAINT && node)
        return d->err(ErrorCode::NotFound, "no node " + std::to_string(*node) + " to log to");
    if (rc != SQLITE_DONE)
        return d->error(rc, "cannot write a log line");
    return std::int64_t(sqlite3_last_insert_rowid(d->db.get()));
}

namespace {

Result<std::vector<LogRecord>> selectLogs(sqlite3 *db, const std::string &path, std::string_view where,
                                          std::optional<std::int64_t> arg)
{
    Stmt s(db, selectSql(kLogs) + " " + std::string(where) + " ORDER BY id");
    if (arg)
        s.bind(1, *arg);
    std::vector<LogRecord> out;
    int rc;
    while ((rc = s.step()) == SQLITE_ROW) {
        LogRecord l;
        l.id = s.int64(column(kLogs, "id"));
        if (!s.isNull(column(kLogs, "node")))
            l.node = s.int64(column(kLogs, "node"));
        l.time = s.text(column(kLogs, "time"));
        l.text = s.text(column(kLogs, "text"));
        out.push_back(std::move(l));
    }
    if (rc != SQLITE_DONE)
        return sqlError(db, rc, path, "cannot read logs");
    return out;
}

} // namespace

Result<std::vector<LogRecord>> SessionStore::logs(std::int64_t node) const
{
    if (auto e = unusable(false))
        return *e;
    return selectLogs(d->db.get(), d->path, "WHERE node = ?", node);
}

Result<std::vector<LogRecord>> SessionStore::allLogs() const
{
    if (auto e = unusable(false))
        return *e;
    return selectLogs(d->db.get(), d->path, "", std::nullopt);
}

Result<std::int64_t> SessionStore::appendEvent(std::string_view kind, const nlohmann::json &data)
{
    if (auto e = unusable(true))
        return *e;
    Stmt s(d->db.get(), insertSql(kEvents));
    s.bind(param(kEvents, "time"), isoTimeNow())
        .bind(param(kEvents, "kind"), kind)
        .bind(param(kEvents, "json"), dumpJson(data));
    const int rc = s.step();
    if (rc != SQLITE_DONE)
        return d->error(rc, "cannot write an event");
    return std::int64_t(sqlite3_last_insert_rowid(d->db.get()));
}

Result<std::vector<EventRecord>> SessionStore::events(std::int64_t afterId) const
{
    if (auto e = unusable(false))
        return *e;
    Stmt s(d->db.get(), selectSql(kEvents) + " WHERE id > ? ORDER BY id");
    s.bind(1, afterId);
    std::vector<EventRecord> out;
    int rc;
    while ((rc = s.step()) == SQLITE_ROW) {
        EventRecord e;
        e.id = s.int64(column(kEvents, "id"));
        e.time = s.text(column(kEvents, "time"));
        e.kind = s.text(column(kEvents, "kind"));
        auto j = parseJson(s.text(column(kEvents, "json")));
        if (!j)
            return d->err(ErrorCode::Damaged, "damaged: event " + std::to_string(e.id) + " is not JSON");
        e.data = std::move(*j);
        out.push_back(std::move(e));
    }
    if (rc != SQLITE_DONE)
        return d->error(rc, "cannot read events");
    return out;
}

} // namespace kf
