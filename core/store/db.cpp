#include "store/db.h"

namespace kf::store {

namespace {
constexpr int kBusyTimeoutMs = 5000;
}

Error sqlError(sqlite3 *db, int rc, const std::string &path, std::string_view what)
{
    // The connection's message is its last call's: when a later call succeeded (a rollback after
    // the failure), it says "not an error", and only the code still knows what went wrong.
    const std::string detail = db && sqlite3_errcode(db) != SQLITE_OK ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    const std::string prefix = what.empty() ? std::string() : std::string(what) + ": ";
    switch (rc & 0xff) {
    case SQLITE_TOOBIG:
        return makeError(ErrorCode::TooLarge,
                         prefix + "a value is larger than a session can hold (SQLite keeps up to " +
                             std::to_string(db ? sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1) : 0) + " bytes)",
                         path);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
        return makeError(ErrorCode::Damaged, "damaged: " + detail, path);
    case SQLITE_READONLY:
        return makeError(ErrorCode::ReadOnly, prefix + detail, path);
    case SQLITE_FULL:
        return makeError(ErrorCode::Io, prefix + "disk full (" + detail + ")", path);
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
        return makeError(ErrorCode::Io, prefix + detail, path);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return makeError(ErrorCode::Busy, prefix + "the session is locked by another process (" + detail + ")", path);
    case SQLITE_CONSTRAINT:
        return makeError(ErrorCode::Invalid, prefix + detail, path);
    default:
        return makeError(ErrorCode::Sqlite, prefix + detail, path);
    }
}

Opened openConnection(const std::string &name, int flags)
{
    sqlite3 *raw = nullptr;
    const int rc = sqlite3_open_v2(name.c_str(), &raw, flags, nullptr);
    Opened o{DbPtr(raw), rc, {}};
    if (rc != SQLITE_OK) {
        o.message = raw ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
        o.db.reset();
        return o;
    }
    sqlite3 *db = o.db.get();
    sqlite3_busy_timeout(db, kBusyTimeoutMs);
    // Sessions get shared (the examples, files from colleagues), so treat every file as untrusted:
    // no schema tricks, no functions with side effects reachable from the file's schema, no
    // triggers or views of the file's own making, extra checks against corrupt b-tree cells.
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
#ifdef SQLITE_DBCONFIG_TRUSTED_SCHEMA
    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
#endif
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, nullptr);
#ifdef SQLITE_DBCONFIG_ENABLE_VIEW
    sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
#endif
    sqlite3_exec(db, "PRAGMA cell_size_check = ON", nullptr, nullptr, nullptr);
    return o;
}

Scalar scalar(sqlite3 *db, std::string_view sql)
{
    Stmt s(db, sql);
    Scalar r;
    const int rc = s.step();
    if (rc == SQLITE_ROW) {
        r.hasRow = true;
        r.text = s.text(0);
        r.number = s.int64(0);
    } else if (rc != SQLITE_DONE) {
        r.rc = rc;
    }
    return r;
}

std::string dumpJson(const nlohmann::json &j)
{
    // Replace invalid UTF-8 instead of throwing: nothing in this API throws.
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<nlohmann::json> parseJson(const std::string &text)
{
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded())
        return std::nullopt;
    return j;
}

} // namespace kf::store
