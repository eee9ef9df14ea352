#include "store/schema.h"

#include "store/db.h"

#include <algorithm>
#include <vector>

namespace kf::store {

namespace {

int since(const Table &t, const Column &c) { return std::max(t.since, c.since); }

std::string join(const std::vector<std::string> &parts, std::string_view separator)
{
    std::string out;
    for (const std::string &p : parts) {
        if (!out.empty())
            out += separator;
        out += p;
    }
    return out;
}

// The column as SQL, its name padded to `width` so a CREATE statement's types line up: the
// schema text a file keeps is the statement as written, and older files have it so aligned.
std::string definition(const Column &c, std::size_t width = 0)
{
    std::string out(c.name);
    out.append(width > c.name.size() ? width - c.name.size() : 1, ' ');
    out += c.type;
    if (!c.constraints.empty())
        out += ' ' + std::string(c.constraints);
    if (!c.defaultValue.empty())
        out += " DEFAULT " + std::string(c.defaultValue);
    return out;
}

// CREATE TABLE with the columns of format `version`, then the table's indexes.
std::string createSql(const Table &t, int version)
{
    std::size_t width = 0;
    for (const Column &c : t.columns)
        if (since(t, c) <= version)
            width = std::max(width, c.name.size() + 1);
    std::vector<std::string> lines;
    for (const Column &c : t.columns)
        if (since(t, c) <= version)
            lines.push_back("    " + definition(c, width));
    if (!t.constraint.empty())
        lines.push_back("    " + std::string(t.constraint));
    std::string sql = "CREATE TABLE " + std::string(t.name) + " (\n" + join(lines, ",\n") + "\n);\n";
    for (const Index &i : t.indexes)
        sql +=
            "CREATE INDEX " + std::string(i.name) + " ON " + std::string(t.name) + "(" + std::string(i.column) + ");\n";
    return sql;
}

// The names of the columns that a file of format `version` has.
std::string columnList(const Table &t, int version)
{
    std::vector<std::string> names;
    for (const Column &c : t.columns)
        if (since(t, c) <= version)
            names.emplace_back(c.name);
    return join(names, ", ");
}

} // namespace

std::string selectSql(const Table &t, int version)
{
    std::vector<std::string> names;
    for (const Column &c : t.columns)
        names.emplace_back(since(t, c) <= version ? c.name : c.defaultValue.empty() ? "NULL" : c.defaultValue);
    return "SELECT " + join(names, ", ") + " FROM " + std::string(t.name);
}

std::string insertSql(const Table &t, std::string_view verb)
{
    std::vector<std::string> names, marks;
    for (const Column &c : t.columns) {
        if (isRowid(c))
            continue;
        names.emplace_back(c.name);
        marks.emplace_back("?");
    }
    return std::string(verb) + " INTO " + std::string(t.name) + "(" + join(names, ", ") + ") VALUES (" +
        join(marks, ", ") + ")";
}

std::string upgradeSql(int from, int to)
{
    // Step by step, also for a new file: a new file and a migrated one then keep the same schema
    // text, where a column added later stands after the table's closing line.
    std::string sql;
    for (int v = from + 1; v <= to; ++v) {
        for (const Table *t : kTables)
            if (t->since == v)
                sql += createSql(*t, v);
        for (const Table *t : kTables) {
            if (t->since >= v)
                continue;
            for (const Column &c : t->columns)
                if (c.since == v)
                    sql += "ALTER TABLE " + std::string(t->name) + " ADD COLUMN " + definition(c) + ";\n";
        }
    }
    return sql;
}

std::optional<Error> migrate(sqlite3 *db, const std::string &path, int from)
{
    const std::string version = "PRAGMA user_version = " + std::to_string(kSessionFormatVersion);
    int rc = exec(db, "BEGIN IMMEDIATE");
    if (rc == SQLITE_OK)
        rc = exec(db, upgradeSql(from, kSessionFormatVersion));
    if (rc == SQLITE_OK)
        rc = exec(db, version);
    if (rc == SQLITE_OK)
        rc = exec(db, "COMMIT");
    if (rc == SQLITE_OK)
        return std::nullopt;
    // Named before the rollback, which would leave the connection saying "not an error".
    Error e = sqlError(db, rc, path, "cannot migrate the session from format " + std::to_string(from));
    exec(db, "ROLLBACK");
    return e;
}

Checked checkSession(sqlite3 *db, const std::string &path)
{
    Checked c;
    auto fail = [&](int rc, Error e) {
        c.rc = rc;
        c.error = std::move(e);
        return c;
    };
    const auto notOurs = [&](std::string why) {
        return makeError(ErrorCode::Format, "not a KernelForge session (" + why + ")", path);
    };

    const Scalar hasMeta = scalar(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'");
    if (hasMeta.rc != SQLITE_OK)
        return fail(hasMeta.rc, sqlError(db, hasMeta.rc, path, "cannot read"));
    if (hasMeta.number == 0)
        return fail(SQLITE_OK, notOurs("an SQLite database without a session's tables"));

    const Scalar format = scalar(db, "SELECT value FROM meta WHERE key = 'format'");
    if (format.rc != SQLITE_OK) {
        // A "meta" table of some other shape is someone else's database; anything else is damage.
        if ((format.rc & 0xff) == SQLITE_ERROR)
            return fail(SQLITE_OK, notOurs("an SQLite database without a session's tables"));
        return fail(format.rc, sqlError(db, format.rc, path, "cannot read"));
    }
    if (!format.hasRow || format.text != kSessionFormatName)
        return fail(SQLITE_OK, notOurs("no \"format\" entry saying " + std::string(kSessionFormatName)));

    const Scalar version = scalar(db, "PRAGMA user_version");
    if (version.rc != SQLITE_OK)
        return fail(version.rc, sqlError(db, version.rc, path, "cannot read"));
    c.version = int(version.number);
    if (c.version > kSessionFormatVersion)
        return fail(SQLITE_OK,
                    makeError(ErrorCode::Version,
                              "written by a newer KernelForge (format " + std::to_string(c.version) +
                                  ", this reads up to " + std::to_string(kSessionFormatVersion) + ")",
                              path));
    if (c.version < 1)
        return fail(SQLITE_OK,
                    makeError(ErrorCode::Damaged,
                              "damaged: no format version (user_version " + std::to_string(c.version) + ")", path));

    // A session is small (megabytes), so a full structural check on open is cheap, and it turns a
    // truncated or scribbled file into one clear error instead of a tree that stops half-way.
    Stmt check(db, "PRAGMA quick_check");
    int rc = check.step();
    if (rc != SQLITE_ROW)
        return fail(rc, sqlError(db, rc, path, "cannot read"));
    if (check.text(0) != "ok")
        return fail(SQLITE_CORRUPT, makeError(ErrorCode::Damaged, "damaged: " + check.text(0), path));

    // The columns that the file's format has must all be there.
    for (const Table *t : kTables) {
        if (t->since > c.version)
            continue;
        Stmt s(db, "SELECT " + columnList(*t, c.version) + " FROM " + std::string(t->name));
        if (!s.prepared())
            return fail(SQLITE_CORRUPT,
                        makeError(ErrorCode::Damaged, "damaged: " + std::string(sqlite3_errmsg(db)), path));
    }
    return c;
}

} // namespace kf::store
