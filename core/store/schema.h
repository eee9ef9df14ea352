#pragma once
// The session's tables, each described once. The CREATE statements, the steps that bring an
// older file up to this format, the check on open and the column lists of INSERTs and SELECTs
// are all made from these descriptions, so a new column is one line here (plus its field in the
// record, its bind and its read). docs/session-format.md describes the same tables for people.
#include "store/session_store.h"

#include <sqlite3.h>

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace kf::store {

struct Column {
    std::string_view name = {};
    std::string_view type = {};         // INTEGER, TEXT or REAL
    std::string_view constraints = {};  // as written in SQL, the default apart; may be empty
    std::string_view defaultValue = {}; // an SQL literal, or empty for none
    int since = 0;                      // the format that added the column; 0: the table's
};

struct Index {
    std::string_view name = {};
    std::string_view column = {};
};

struct Table {
    std::string_view name = {};
    std::span<const Column> columns = {};
    std::string_view constraint = {}; // a table constraint, or empty
    std::span<const Index> indexes = {};
    int since = 1; // the format that added the table
};

inline constexpr Column kMetaColumns[] = {
    {"key", "TEXT", "PRIMARY KEY NOT NULL", ""},
    {"value", "TEXT", "NOT NULL", ""},
};
inline constexpr Table kMeta{.name = "meta", .columns = kMetaColumns};

inline constexpr Column kNodeColumns[] = {
    {"id", "INTEGER", "PRIMARY KEY", ""},
    {"parent", "INTEGER", "REFERENCES nodes(id)", ""},
    {"kind", "TEXT", "NOT NULL CHECK (kind IN ('root', 'round', 'idea', 'candidate'))", ""},
    {"round", "INTEGER", "NOT NULL", "0"},
    {"title", "TEXT", "NOT NULL", "''"},
    {"text", "TEXT", "NOT NULL", "''"},
    {"status", "TEXT", "NOT NULL", "''"},
    {"reason", "TEXT", "NOT NULL", "''"},
    {"result_json", "TEXT", "", ""},
    {"edited", "INTEGER", "NOT NULL", "0"},
    {"created", "TEXT", "NOT NULL", ""},
    {"updated", "TEXT", "NOT NULL", ""},
};
inline constexpr Index kNodeIndexes[] = {{"nodes_parent", "parent"}};
inline constexpr Table kNodes{.name = "nodes", .columns = kNodeColumns, .indexes = kNodeIndexes};

inline constexpr Column kLogColumns[] = {
    {"id", "INTEGER", "PRIMARY KEY", ""},
    {"node", "INTEGER", "REFERENCES nodes(id)", ""},
    {"time", "TEXT", "NOT NULL", ""},
    {"text", "TEXT", "NOT NULL", ""},
};
inline constexpr Index kLogIndexes[] = {{"logs_node", "node"}};
inline constexpr Table kLogs{.name = "logs", .columns = kLogColumns, .indexes = kLogIndexes};

inline constexpr Column kEventColumns[] = {
    {"id", "INTEGER", "PRIMARY KEY", ""},
    {"time", "TEXT", "NOT NULL", ""},
    {"kind", "TEXT", "NOT NULL", ""},
    {"json", "TEXT", "NOT NULL", ""},
};
inline constexpr Table kEvents{.name = "events", .columns = kEventColumns};

// Every request to a language model, its answer and what it cost (format 2); how each answer
// ended (format 3).
inline constexpr Column kExchangeColumns[] = {
    {"id", "INTEGER", "PRIMARY KEY", ""},
    {"round", "INTEGER", "NOT NULL", "0"},
    {"purpose", "TEXT", "NOT NULL", "''"},
    {"generator", "TEXT", "NOT NULL", "''"},
    {"model", "TEXT", "NOT NULL", "''"},
    {"endpoint", "TEXT", "NOT NULL", "''"},
    {"request", "TEXT", "NOT NULL", "''"},
    {"prompt", "TEXT", "NOT NULL", "''"},
    {"response", "TEXT", "NOT NULL", "''"},
    {"answer", "TEXT", "NOT NULL", "''"},
    {"reasoning", "TEXT", "NOT NULL", "''"},
    {"error", "TEXT", "NOT NULL", "''"},
    {"http_status", "INTEGER", "NOT NULL", "0"},
    {"attempts", "INTEGER", "NOT NULL", "0"},
    {"prompt_tokens", "INTEGER", "NOT NULL", "0"},
    {"completion_tokens", "INTEGER", "NOT NULL", "0"},
    {"reasoning_tokens", "INTEGER", "NOT NULL", "0"},
    {"cost", "REAL", "NOT NULL", "0"},
    {"latency_ms", "REAL", "NOT NULL", "0"},
    {"time", "TEXT", "NOT NULL", ""},
    {"stop_reason", "TEXT", "NOT NULL", "''", 3},
    {"ending", "TEXT", "NOT NULL", "''", 3},
};
inline constexpr Table kExchanges{.name = "exchanges", .columns = kExchangeColumns, .since = 2};

inline constexpr Column kExchangeNodeColumns[] = {
    {"exchange", "INTEGER", "NOT NULL REFERENCES exchanges(id)", ""},
    {"node", "INTEGER", "NOT NULL REFERENCES nodes(id)", ""},
};
inline constexpr Index kExchangeNodeIndexes[] = {{"exchange_nodes_node", "node"}};
inline constexpr Table kExchangeNodes{.name = "exchange_nodes",
                                      .columns = kExchangeNodeColumns,
                                      .constraint = "PRIMARY KEY (exchange, node)",
                                      .indexes = kExchangeNodeIndexes,
                                      .since = 2};

// In the order they are created: a file's schema text lists them so.
inline constexpr const Table *kTables[] = {&kMeta, &kNodes, &kLogs, &kEvents, &kExchanges, &kExchangeNodes};

// An INTEGER PRIMARY KEY is the rowid: SQLite assigns it, so INSERTs leave it out.
constexpr bool isRowid(const Column &c) { return c.type == "INTEGER" && c.constraints == "PRIMARY KEY"; }

// Where a column is in selectList(t), from 0; a misspelt name does not compile.
consteval int column(const Table &t, std::string_view name)
{
    for (std::size_t i = 0; i < t.columns.size(); ++i)
        if (t.columns[i].name == name)
            return int(i);
    throw "no such column";
}

// Which parameter of insertSql(t) a column is, from 1; a misspelt name does not compile.
consteval int param(const Table &t, std::string_view name)
{
    int n = 0;
    for (const Column &c : t.columns) {
        if (isRowid(c))
            continue;
        ++n;
        if (c.name == name)
            return n;
    }
    throw "no such column, or the rowid";
}

// "SELECT <every column> FROM <table>", columns in their described order. A column that a file of
// format `version` lacks reads as its default, as migrating the file would have filled it in.
std::string selectSql(const Table &t, int version = kSessionFormatVersion);
// "<verb> INTO <table>(<columns but the rowid>) VALUES (?, ...)".
std::string insertSql(const Table &t, std::string_view verb = "INSERT");
// The statements that take a file from format `from` to format `to`; from 0 they create one.
std::string upgradeSql(int from, int to);

// Brings an open file of format `from` up to kSessionFormatVersion in one transaction.
std::optional<Error> migrate(sqlite3 *db, const std::string &path, int from);

// Checks that an open connection holds a session this build can read, and returns its version.
// Errors carry the SQLite code in `rc` so open() can tell "cannot read here" from "not ours".
struct Checked {
    std::optional<Error> error;
    int rc = SQLITE_OK;
    int version = 0;
};
Checked checkSession(sqlite3 *db, const std::string &path);

} // namespace kf::store
