#pragma once
// The SQLite side of the store, shared by its source files: errors a person can act on,
// statements that clean up after themselves, connections opened the one safe way.
#include "store/session_store.h"

#include <sqlite3.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace kf::store {

// Maps an SQLite failure to an Error a person can act on.
Error sqlError(sqlite3 *db, int rc, const std::string &path, std::string_view what);

// A prepared statement that finalizes itself. Columns are read by index in SELECT order.
class Stmt {
public:
    Stmt(sqlite3 *db, std::string_view sql)
    {
        m_prepareRc = sqlite3_prepare_v2(db, sql.data(), int(sql.size()), &m_s, nullptr);
        m_rc = m_prepareRc;
    }
    ~Stmt() { sqlite3_finalize(m_s); }
    Stmt(const Stmt &) = delete;
    Stmt &operator=(const Stmt &) = delete;

    bool prepared() const { return m_prepareRc == SQLITE_OK && m_s; }
    // The code of the last prepare or step.
    int rc() const { return m_rc; }

    // A failed bind (a text longer than SQLite takes) shows in step(), with its own code: left
    // unchecked, the parameter would stay NULL for a NOT NULL column to reject, misleadingly.
    Stmt &bind(int i, std::string_view v)
    {
        if (!m_s)
            return *this;
        const int rc = v.size() > std::size_t(std::numeric_limits<int>::max())
            ? SQLITE_TOOBIG
            : sqlite3_bind_text(m_s, i, v.data(), int(v.size()), SQLITE_TRANSIENT);
        if (rc != SQLITE_OK && m_bindRc == SQLITE_OK)
            m_bindRc = rc;
        return *this;
    }
    Stmt &bind(int i, std::int64_t v)
    {
        if (m_s)
            sqlite3_bind_int64(m_s, i, v);
        return *this;
    }
    Stmt &bind(int i, double v)
    {
        if (m_s)
            sqlite3_bind_double(m_s, i, v);
        return *this;
    }
    Stmt &bindNull(int i)
    {
        if (m_s)
            sqlite3_bind_null(m_s, i);
        return *this;
    }
    Stmt &bindOptional(int i, const std::optional<std::int64_t> &v) { return v ? bind(i, *v) : bindNull(i); }
    Stmt &bindOptional(int i, const std::optional<std::string> &v)
    {
        return v ? bind(i, std::string_view(*v)) : bindNull(i);
    }

    // SQLITE_ROW, SQLITE_DONE, or an error code.
    int step()
    {
        if (!prepared())
            return m_prepareRc == SQLITE_OK ? SQLITE_MISUSE : m_prepareRc;
        if (m_bindRc != SQLITE_OK)
            return m_rc = m_bindRc;
        m_rc = sqlite3_step(m_s);
        return m_rc;
    }

    bool isNull(int c) const { return sqlite3_column_type(m_s, c) == SQLITE_NULL; }
    std::int64_t int64(int c) const { return sqlite3_column_int64(m_s, c); }
    double real(int c) const { return sqlite3_column_double(m_s, c); }
    std::string text(int c) const
    {
        const auto *p = reinterpret_cast<const char *>(sqlite3_column_text(m_s, c));
        return p ? std::string(p, std::size_t(sqlite3_column_bytes(m_s, c))) : std::string();
    }

private:
    sqlite3_stmt *m_s = nullptr;
    int m_prepareRc = SQLITE_OK;
    int m_bindRc = SQLITE_OK;
    int m_rc = SQLITE_OK;
};

struct DbCloser {
    void operator()(sqlite3 *db) const { sqlite3_close_v2(db); }
};
using DbPtr = std::unique_ptr<sqlite3, DbCloser>;

// A connection attempt: the handle, or the SQLite code and message of why not.
struct Opened {
    DbPtr db;
    int rc = SQLITE_OK;
    std::string message;
};

Opened openConnection(const std::string &name, int flags);

// Runs statements that return nothing useful (DDL, PRAGMAs that set).
inline int exec(sqlite3 *db, const char *sql) { return sqlite3_exec(db, sql, nullptr, nullptr, nullptr); }
inline int exec(sqlite3 *db, const std::string &sql) { return exec(db, sql.c_str()); }

// The first row's first column of a one-value query, or the failure code.
struct Scalar {
    int rc = SQLITE_OK;
    bool hasRow = false;
    std::string text;
    std::int64_t number = 0;
};

Scalar scalar(sqlite3 *db, std::string_view sql);

std::string dumpJson(const nlohmann::json &j);
std::optional<nlohmann::json> parseJson(const std::string &text);

} // namespace kf::store

namespace kf {

struct SessionStore::Impl {
    store::DbPtr db;
    std::string path;
    bool readOnly = false;
    int version = 0;

    Error error(int rc, std::string_view what) const { return store::sqlError(db.get(), rc, path, what); }
    Error err(ErrorCode code, std::string message) const
    {
        return makeError(std::move(code), std::move(message), path);
    }
};

} // namespace kf
