#include "store/session_store.h"

#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>

namespace fs = std::filesystem;

namespace kf {

namespace {

constexpr std::string_view kSqliteMagic{"SQLite format 3\0", 16};
// PRAGMA application_id: "KFss". Lets `file` and other tools recognise a session; the meta
// "format" key stays the authority.
constexpr int kApplicationId = 0x4B467373;
constexpr int kBusyTimeoutMs = 5000;

const char *kSchema = R"sql(
CREATE TABLE meta (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);
CREATE TABLE nodes (
    id          INTEGER PRIMARY KEY,
    parent      INTEGER REFERENCES nodes(id),
    kind        TEXT NOT NULL CHECK (kind IN ('root', 'round', 'idea', 'candidate')),
    round       INTEGER NOT NULL DEFAULT 0,
    title       TEXT NOT NULL DEFAULT '',
    text        TEXT NOT NULL DEFAULT '',
    status      TEXT NOT NULL DEFAULT '',
    reason      TEXT NOT NULL DEFAULT '',
    result_json TEXT,
    edited      INTEGER NOT NULL DEFAULT 0,
    created     TEXT NOT NULL,
    updated     TEXT NOT NULL
);
CREATE INDEX nodes_parent ON nodes(parent);
CREATE TABLE logs (
    id   INTEGER PRIMARY KEY,
    node INTEGER REFERENCES nodes(id),
    time TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX logs_node ON logs(node);
CREATE TABLE events (
    id   INTEGER PRIMARY KEY,
    time TEXT NOT NULL,
    kind TEXT NOT NULL,
    json TEXT NOT NULL
);
)sql";

// Added by format 2: every request to a language model, its answer and what it cost. Kept apart
// from kSchema because migrating a format 1 file runs this alone.
const char *kExchangeSchema = R"sql(
CREATE TABLE exchanges (
    id                INTEGER PRIMARY KEY,
    round             INTEGER NOT NULL DEFAULT 0,
    purpose           TEXT NOT NULL DEFAULT '',
    generator         TEXT NOT NULL DEFAULT '',
    model             TEXT NOT NULL DEFAULT '',
    endpoint          TEXT NOT NULL DEFAULT '',
    request           TEXT NOT NULL DEFAULT '',
    prompt            TEXT NOT NULL DEFAULT '',
    response          TEXT NOT NULL DEFAULT '',
    answer            TEXT NOT NULL DEFAULT '',
    reasoning         TEXT NOT NULL DEFAULT '',
    error             TEXT NOT NULL DEFAULT '',
    http_status       INTEGER NOT NULL DEFAULT 0,
    attempts          INTEGER NOT NULL DEFAULT 0,
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    reasoning_tokens  INTEGER NOT NULL DEFAULT 0,
    cost              REAL NOT NULL DEFAULT 0,
    latency_ms        REAL NOT NULL DEFAULT 0,
    time              TEXT NOT NULL
);
CREATE TABLE exchange_nodes (
    exchange INTEGER NOT NULL REFERENCES exchanges(id),
    node     INTEGER NOT NULL REFERENCES nodes(id),
    PRIMARY KEY (exchange, node)
);
CREATE INDEX exchange_nodes_node ON exchange_nodes(node);
)sql";

// Added by format 3: how each answer ended. Columns with defaults, so older rows read as "".
const char *kStopSchema = R"sql(
ALTER TABLE exchanges ADD COLUMN stop_reason TEXT NOT NULL DEFAULT '';
ALTER TABLE exchanges ADD COLUMN ending TEXT NOT NULL DEFAULT '';
)sql";

constexpr const char *kExchangeColumns =
    "id, round, purpose, generator, model, endpoint, request, prompt, response, answer, reasoning, error, "
    "http_status, attempts, prompt_tokens, completion_tokens, reasoning_tokens, cost, latency_ms, time";
// What a format 3 file adds to them; a format 2 file opened read-only reads "" in their place.
constexpr const char *kStopColumns = "stop_reason, ending";
constexpr const char *kNoStopColumns = "'', ''";

constexpr const char *kNodeColumns =
    "id, parent, kind, round, title, text, status, reason, result_json, edited, created, updated";

// Maps an SQLite failure to an Error a person can act on.
Error sqlError(sqlite3 *db, int rc, const std::string &path, std::string_view what)
{
    // The connection's message is its last call's: when a later call succeeded (a rollback after
    // the failure), it says "not an error", and only the code still knows what went wrong.
    const std::string detail = db && sqlite3_errcode(db) != SQLITE_OK ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    const std::string prefix = what.empty() ? std::string() : std::string(what) + ": ";
    switch (rc & 0xff) {
    case SQLITE_TOOBIG:
        return makeError("too-large", prefix + "a value is larger than a session can hold (SQLite keeps up to " +
                                          std::to_string(db ? sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1) : 0) +
                                          " bytes)",
                         path);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
        return makeError("damaged", "damaged: " + detail, path);
    case SQLITE_READONLY:
        return makeError("read-only", prefix + detail, path);
    case SQLITE_FULL:
        return makeError("io", prefix + "disk full (" + detail + ")", path);
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
        return makeError("io", prefix + detail, path);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
        return makeError("busy", prefix + "the session is locked by another process (" + detail + ")", path);
    case SQLITE_CONSTRAINT:
        return makeError("invalid", prefix + detail, path);
    default:
        return makeError("sqlite", prefix + detail, path);
    }
}

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
        if (!m_s) return *this;
        const int rc = v.size() > std::size_t(std::numeric_limits<int>::max())
                           ? SQLITE_TOOBIG
                           : sqlite3_bind_text(m_s, i, v.data(), int(v.size()), SQLITE_TRANSIENT);
        if (rc != SQLITE_OK && m_bindRc == SQLITE_OK) m_bindRc = rc;
        return *this;
    }
    Stmt &bind(int i, std::int64_t v)
    {
        if (m_s) sqlite3_bind_int64(m_s, i, v);
        return *this;
    }
    Stmt &bind(int i, double v)
    {
        if (m_s) sqlite3_bind_double(m_s, i, v);
        return *this;
    }
    Stmt &bindNull(int i)
    {
        if (m_s) sqlite3_bind_null(m_s, i);
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
        if (!prepared()) return m_prepareRc == SQLITE_OK ? SQLITE_MISUSE : m_prepareRc;
        if (m_bindRc != SQLITE_OK) return m_rc = m_bindRc;
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

// Runs statements that return nothing useful (DDL, PRAGMAs that set).
int exec(sqlite3 *db, const char *sql) { return sqlite3_exec(db, sql, nullptr, nullptr, nullptr); }

// The first row's first column of a one-value query, or the failure code.
struct Scalar {
    int rc = SQLITE_OK;
    bool hasRow = false;
    std::string text;
    std::int64_t number = 0;
};

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

// A file name as an SQLite URI, for the immutable fallback of read-only opens.
std::string fileUri(const std::string &path, std::string_view query)
{
    std::error_code ec;
    fs::path abs = fs::absolute(path, ec);
    const std::string p = ec ? path : abs.string();
    std::string uri = "file:";
    static const char *hex = "0123456789ABCDEF";
    for (unsigned char c : p) {
        const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                           c == '/' || c == '-' || c == '_' || c == '.' || c == '~';
        if (plain) {
            uri += char(c);
        } else {
            uri += '%';
            uri += hex[c >> 4];
            uri += hex[c & 15];
        }
    }
    uri += '?';
    uri += query;
    return uri;
}

// Up to the first 100 bytes of a file (the SQLite header), or nothing when it cannot be read.
std::optional<std::string> readHeader(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::string head(100, '\0');
    in.read(head.data(), std::streamsize(head.size()));
    head.resize(std::size_t(in.gcount()));
    return head;
}

void removeWithSidecars(const std::string &path, std::error_code &ec)
{
    for (const char *suffix : {"", "-wal", "-shm", "-journal"}) {
        std::error_code one;
        fs::remove(path + suffix, one);
        if (one && !ec) ec = one;
    }
}

std::string dumpJson(const nlohmann::json &j)
{
    // Replace invalid UTF-8 instead of throwing: nothing in this API throws.
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<nlohmann::json> parseJson(const std::string &text)
{
    auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded()) return std::nullopt;
    return j;
}

} // namespace

std::string isoTimeNow()
{
    using namespace std::chrono;
    const auto ms = duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
    const std::time_t secs = std::time_t(ms / 1000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, int(ms % 1000));
    return buf;
}

std::string toString(NodeKind k)
{
    switch (k) {
    case NodeKind::Root: return "root";
    case NodeKind::Round: return "round";
    case NodeKind::Idea: return "idea";
    case NodeKind::Candidate: return "candidate";
    }
    return "candidate";
}

std::optional<NodeKind> parseNodeKind(std::string_view s)
{
    if (s == "root") return NodeKind::Root;
    if (s == "round") return NodeKind::Round;
    if (s == "idea") return NodeKind::Idea;
    if (s == "candidate") return NodeKind::Candidate;
    return std::nullopt;
}

struct SessionStore::Impl {
    DbPtr db;
    std::string path;
    bool readOnly = false;
    int version = 0;

    Error error(int rc, std::string_view what) const { return sqlError(db.get(), rc, path, what); }
    Error err(std::string code, std::string message) const
    {
        return makeError(std::move(code), std::move(message), path);
    }
};

namespace {

// Checks that an open connection holds a session this build can read, and returns its version.
// Errors carry the SQLite code in `rc` so open() can tell "cannot read here" from "not ours".
struct Checked {
    std::optional<Error> error;
    int rc = SQLITE_OK;
    int version = 0;
};

Checked checkSession(sqlite3 *db, const std::string &path)
{
    Checked c;
    auto fail = [&](int rc, Error e) {
        c.rc = rc;
        c.error = std::move(e);
        return c;
    };
    const auto notOurs = [&](std::string why) {
        return makeError("format", "not a KernelForge session (" + why + ")", path);
    };

    const Scalar hasMeta = scalar(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'");
    if (hasMeta.rc != SQLITE_OK) return fail(hasMeta.rc, sqlError(db, hasMeta.rc, path, "cannot read"));
    if (hasMeta.number == 0) return fail(SQLITE_OK, notOurs("an SQLite database without a session's tables"));

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
    if (version.rc != SQLITE_OK) return fail(version.rc, sqlError(db, version.rc, path, "cannot read"));
    c.version = int(version.number);
    if (c.version > kSessionFormatVersion)
        return fail(SQLITE_OK, makeError("version",
                                         "written by a newer KernelForge (format " + std::to_string(c.version) +
                                             ", this reads up to " + std::to_string(kSessionFormatVersion) + ")",
                                         path));
    if (c.version < 1)
        return fail(SQLITE_OK, makeError("damaged", "damaged: no format version (user_version " +
                                                        std::to_string(c.version) + ")",
                                         path));

    // A session is small (megabytes), so a full structural check on open is cheap, and it turns a
    // truncated or scribbled file into one clear error instead of a tree that stops half-way.
    Stmt check(db, "PRAGMA quick_check");
    int rc = check.step();
    if (rc != SQLITE_ROW) return fail(rc, sqlError(db, rc, path, "cannot read"));
    if (check.text(0) != "ok") return fail(SQLITE_CORRUPT, makeError("damaged", "damaged: " + check.text(0), path));

    // The columns this build reads must all be there (format 1 files have no exchanges yet).
    std::vector<std::string> reads = {std::string("SELECT ") + kNodeColumns + " FROM nodes",
                                      std::string("SELECT id, node, time, text FROM logs"),
                                      std::string("SELECT id, time, kind, json FROM events")};
    if (c.version >= 2) {
        reads.push_back(std::string("SELECT ") + kExchangeColumns + " FROM exchanges");
        reads.push_back("SELECT exchange, node FROM exchange_nodes");
    }
    if (c.version >= 3)
        reads.push_back(std::string("SELECT ") + kStopColumns + " FROM exchanges");
    for (const std::string &sql : reads) {
        Stmt s(db, sql);
        if (!s.prepared())
            return fail(SQLITE_CORRUPT, makeError("damaged", "damaged: " + std::string(sqlite3_errmsg(db)), path));
    }
    return c;
}

} // namespace

SessionStore::SessionStore(std::unique_ptr<Impl> impl) : d(std::move(impl)) {}
SessionStore::SessionStore(SessionStore &&) noexcept = default;
SessionStore &SessionStore::operator=(SessionStore &&) noexcept = default;
SessionStore::~SessionStore() = default;

Result<SessionStore> SessionStore::create(const std::string &path, const SessionMeta &meta, bool overwrite)
{
    std::error_code ec;
    if (fs::exists(path, ec)) {
        if (!overwrite) return makeError("exists", "the file already exists", path);
        removeWithSidecars(path, ec);
        if (ec) return makeError("io", "cannot replace the file: " + ec.message(), path);
    } else {
        // Stale sidecars of an earlier file by this name would be read as this file's journal.
        removeWithSidecars(path, ec);
    }

    Opened o = openConnection(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    if (!o.db) return makeError("io", "cannot create: " + o.message, path);

    auto impl = std::make_unique<Impl>();
    impl->db = std::move(o.db);
    impl->path = path;
    impl->version = kSessionFormatVersion;
    sqlite3 *db = impl->db.get();

    auto failed = [&](int rc, std::string_view what) -> Error {
        Error e = impl->error(rc, what);
        impl->db.reset();
        std::error_code ignored;
        removeWithSidecars(path, ignored);
        return e;
    };

    // WAL: a reader (the GUI) can follow a file that a search is writing, and a commit is one
    // append. synchronous=FULL also keeps the last commits through a power cut; results arrive
    // about once a second, so the fsync per commit costs nothing that matters.
    const Scalar mode = scalar(db, "PRAGMA journal_mode = WAL");
    if (mode.rc != SQLITE_OK) return failed(mode.rc, "cannot create");
    int rc = exec(db, "PRAGMA synchronous = FULL");
    if (rc == SQLITE_OK) rc = exec(db, "PRAGMA foreign_keys = ON");
    if (rc != SQLITE_OK) return failed(rc, "cannot create");

    const std::string created = meta.created.empty() ? isoTimeNow() : meta.created;
    const std::string settings = dumpJson(meta.settings);
    // Views: the problem text can be hundreds of megabytes (a module problem's parameters).
    const std::vector<std::pair<std::string_view, std::string_view>> rows = {
        {session_meta::Format, kSessionFormatName},
        {session_meta::Created, created},
        {session_meta::Writer, meta.writer},
        {session_meta::ProblemName, meta.problemName},
        {session_meta::ProblemText, meta.problemText},
        {session_meta::ProblemVariant, meta.problemVariant},
        {session_meta::Generator, meta.generator},
        {session_meta::Settings, settings},
        {session_meta::Gpu, meta.gpuName},
    };

    // The schema and the meta land together, so no reader ever sees a session without its format.
    rc = exec(db, "BEGIN IMMEDIATE");
    if (rc != SQLITE_OK) return failed(rc, "cannot create");
    rc = exec(db, kSchema);
    if (rc == SQLITE_OK) rc = exec(db, kExchangeSchema);
    if (rc == SQLITE_OK) rc = exec(db, kStopSchema);
    if (rc == SQLITE_OK) {
        const std::string pragmas = "PRAGMA user_version = " + std::to_string(kSessionFormatVersion) +
                                    "; PRAGMA application_id = " + std::to_string(kApplicationId) + ";";
        rc = exec(db, pragmas.c_str());
    }
    for (const auto &[key, value] : rows) {
        if (rc != SQLITE_OK) break;
        Stmt s(db, "INSERT INTO meta(key, value) VALUES (?, ?)");
        s.bind(1, key).bind(2, value);
        rc = s.step() == SQLITE_DONE ? SQLITE_OK : s.rc();
    }
    if (rc == SQLITE_OK && meta.baseline) {
        Stmt s(db, "INSERT INTO meta(key, value) VALUES (?, ?)");
        s.bind(1, session_meta::Baseline).bind(2, dumpJson(*meta.baseline));
        rc = s.step() == SQLITE_DONE ? SQLITE_OK : s.rc();
    }
    if (rc == SQLITE_OK) rc = exec(db, "COMMIT");
    // No ROLLBACK first: closing the connection rolls back, and a successful ROLLBACK would leave
    // the connection's message saying "not an error" where the failure should be named.
    if (rc != SQLITE_OK) return failed(rc, "cannot create");
    return SessionStore(std::move(impl));
}

Result<SessionStore> SessionStore::open(const std::string &path, bool readOnly)
{
    std::error_code ec;
    const auto st = fs::status(path, ec);
    if (!fs::exists(st)) return makeError("io", "no such file", path);
    if (fs::is_directory(st)) return makeError("io", "a folder, not a session file", path);

    // Look at the header ourselves: SQLite would take an empty file for an empty database and
    // describe any other file only as "not a database".
    const auto head = readHeader(path);
    if (!head) return makeError("io", "cannot read the file", path);
    if (head->empty()) return makeError("format", "not a KernelForge session (the file is empty)", path);
    if (head->compare(0, kSqliteMagic.size(), kSqliteMagic) != 0)
        return makeError("format", "not a KernelForge session (not an SQLite database)", path);
    if (head->size() < 100) return makeError("damaged", "damaged: the file ends inside its header", path);
    // Header bytes 18 and 19 are 2 in WAL mode.
    const bool walFile = (*head)[18] == 2 || (*head)[19] == 2;

    const int flags = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
    Opened o = openConnection(path, flags);
    if (!o.db) return makeError("io", "cannot open: " + o.message, path);
    Checked c = checkSession(o.db.get(), path);

    const auto readOnlyHere = [&] {
        return makeError("read-only", "cannot open for writing (the file or its folder is read-only); open it read-only",
                         path);
    };
    const int code = c.rc & 0xff;
    if (c.error && (code == SQLITE_CANTOPEN || code == SQLITE_READONLY || code == SQLITE_IOERR)) {
        // SQLite quietly opens a write-protected file read-only and fails only when it needs to write.
        if (!readOnly && sqlite3_db_readonly(o.db.get(), "main") == 1) return readOnlyHere();
        // Reading a WAL file needs its -shm index, which cannot be made in a read-only folder. When
        // no write-ahead log holds changes, the main file is the whole session: read it as immutable.
        if (readOnly && walFile) {
            const auto walSize = fs::file_size(path + "-wal", ec);
            if (!ec && walSize > 0)
                return makeError("io",
                                 "cannot read: its write-ahead log (-wal) holds changes and its folder is "
                                 "read-only; copy the session to a writable folder",
                                 path);
            o.db.reset();
            o = openConnection(fileUri(path, "immutable=1"), SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
            if (!o.db) return makeError("io", "cannot open: " + o.message, path);
            c = checkSession(o.db.get(), path);
        }
    }
    if (c.error) return *c.error;

    auto impl = std::make_unique<Impl>();
    impl->db = std::move(o.db);
    impl->path = path;
    impl->readOnly = readOnly;
    impl->version = c.version;
    sqlite3 *db = impl->db.get();

    if (!readOnly) {
        // Say so now, not at the first write.
        if (sqlite3_db_readonly(db, "main") == 1) return readOnlyHere();
        const Scalar mode = scalar(db, "PRAGMA journal_mode = WAL");
        if (mode.rc != SQLITE_OK) return impl->error(mode.rc, "cannot open for writing");
        if (mode.text != "wal")
            return makeError("io", "cannot switch to write-ahead logging (journal mode stays " + mode.text + ")",
                             path);
        int rc = exec(db, "PRAGMA synchronous = FULL");
        if (rc == SQLITE_OK) rc = exec(db, "PRAGMA foreign_keys = ON");
        if (rc != SQLITE_OK) return impl->error(rc, "cannot open for writing");
        // Older formats are brought up to this one before anything else is written, in one
        // transaction: a file is either still in its old format or wholly in this one.
        if (impl->version < kSessionFormatVersion) {
            const std::string version = "PRAGMA user_version = " + std::to_string(kSessionFormatVersion);
            rc = exec(db, "BEGIN IMMEDIATE");
            if (rc == SQLITE_OK && impl->version < 2) rc = exec(db, kExchangeSchema);
            if (rc == SQLITE_OK && impl->version < 3) rc = exec(db, kStopSchema);
            if (rc == SQLITE_OK) rc = exec(db, version.c_str());
            if (rc == SQLITE_OK) rc = exec(db, "COMMIT");
            if (rc != SQLITE_OK) {
                const Error e = impl->error(rc, "cannot migrate the session from format " +
                                                    std::to_string(impl->version));
                exec(db, "ROLLBACK");
                return e;
            }
            impl->version = kSessionFormatVersion;
        }
    }
    return SessionStore(std::move(impl));
}

const std::string &SessionStore::path() const
{
    static const std::string none;
    return d ? d->path : none;
}

bool SessionStore::readOnly() const { return d ? d->readOnly : true; }
int SessionStore::formatVersion() const { return d ? d->version : 0; }

Status SessionStore::close()
{
    if (!d || !d->db) return Ok{};
    sqlite3 *db = d->db.release();
    const int rc = sqlite3_close(db);
    if (rc != SQLITE_OK) {
        // Statements are finalized per call, so this means a bug; close as soon as SQLite can.
        const Error e = sqlError(db, rc, d->path, "closing");
        sqlite3_close_v2(db);
        return e;
    }
    return Ok{};
}

std::optional<Error> SessionStore::unusable(bool forWrite) const
{
    if (!d || !d->db) return makeError("closed", "the session is closed", d ? d->path : std::string());
    if (forWrite && d->readOnly) return d->err("read-only", "the session is open read-only");
    return std::nullopt;
}

Status SessionStore::setMeta(std::string_view key, std::string_view value)
{
    if (auto e = unusable(true)) return *e;
    if (key == session_meta::Format) return d->err("invalid", "meta \"format\" belongs to the store");
    if (key.empty()) return d->err("invalid", "empty meta key");
    Stmt s(d->db.get(), "INSERT INTO meta(key, value) VALUES (?, ?) "
                        "ON CONFLICT(key) DO UPDATE SET value = excluded.value");
    s.bind(1, key).bind(2, value);
    const int rc = s.step();
    if (rc != SQLITE_DONE) return d->error(rc, "cannot write meta \"" + std::string(key) + "\"");
    return Ok{};
}

Status SessionStore::setMetaJson(std::string_view key, const nlohmann::json &value)
{
    return setMeta(key, dumpJson(value));
}

Result<std::string> SessionStore::meta(std::string_view key) const
{
    if (auto e = unusable(false)) return *e;
    Stmt s(d->db.get(), "SELECT value FROM meta WHERE key = ?");
    s.bind(1, key);
    const int rc = s.step();
    if (rc == SQLITE_ROW) return s.text(0);
    if (rc == SQLITE_DONE) return d->err("not-found", "no meta \"" + std::string(key) + "\"");
    return d->error(rc, "cannot read meta");
}

Result<nlohmann::json> SessionStore::metaJson(std::string_view key) const
{
    auto text = meta(key);
    if (!text) return text.error();
    auto j = parseJson(*text);
    if (!j) return d->err("damaged", "damaged: meta \"" + std::string(key) + "\" is not JSON");
    return *j;
}

Result<std::map<std::string, std::string>> SessionStore::allMeta() const
{
    if (auto e = unusable(false)) return *e;
    Stmt s(d->db.get(), "SELECT key, value FROM meta ORDER BY key");
    std::map<std::string, std::string> out;
    int rc;
    while ((rc = s.step()) == SQLITE_ROW) out[s.text(0)] = s.text(1);
    if (rc != SQLITE_DONE) return d->error(rc, "cannot read meta");
    return out;
}

Result<SessionMeta> SessionStore::sessionMeta() const
{
    auto all = allMeta();
    if (!all) return all.error();
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
        if (!j) return d->err("damaged", "damaged: meta \"settings\" is not JSON");
        m.settings = std::move(*j);
    }
    if (all->count(std::string(session_meta::Baseline))) {
        auto j = parseJson(get(session_meta::Baseline));
        if (!j) return d->err("damaged", "damaged: meta \"baseline\" is not JSON");
        m.baseline = std::move(*j);
    }
    return m;
}

namespace {

// Reads a node row selected with kNodeColumns.
std::optional<NodeRecord> readNode(const Stmt &s)
{
    NodeRecord n;
    n.id = s.int64(0);
    if (!s.isNull(1)) n.parent = s.int64(1);
    const auto kind = parseNodeKind(s.text(2));
    if (!kind) return std::nullopt;
    n.kind = *kind;
    n.round = int(s.int64(3));
    n.title = s.text(4);
    n.text = s.text(5);
    n.status = s.text(6);
    n.reason = s.text(7);
    if (!s.isNull(8)) n.resultJson = s.text(8);
    n.edited = s.int64(9) != 0;
    n.created = s.text(10);
    n.updated = s.text(11);
    return n;
}

} // namespace

Result<std::int64_t> SessionStore::addNode(const NodeRecord &r)
{
    if (auto e = unusable(true)) return *e;
    if (r.kind == NodeKind::Root && r.parent) return d->err("invalid", "a root node has no parent");
    if (r.kind != NodeKind::Root && !r.parent)
        return d->err("invalid", "a " + toString(r.kind) + " node needs a parent");
    if (r.resultJson && !nlohmann::json::accept(*r.resultJson))
        return d->err("invalid", "the result is not JSON");
    sqlite3 *db = d->db.get();
    if (r.parent) {
        // Foreign keys would refuse it too, but only with "FOREIGN KEY constraint failed".
        Stmt p(db, "SELECT 1 FROM nodes WHERE id = ?");
        p.bind(1, *r.parent);
        const int rc = p.step();
        if (rc == SQLITE_DONE) return d->err("not-found", "no node " + std::to_string(*r.parent) + " to add to");
        if (rc != SQLITE_ROW) return d->error(rc, "cannot add a node");
    }
    const std::string now = isoTimeNow();
    Stmt s(db, "INSERT INTO nodes(parent, kind, round, title, text, status, reason, result_json, edited, "
               "created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    s.bindOptional(1, r.parent)
        .bind(2, toString(r.kind))
        .bind(3, std::int64_t(r.round))
        .bind(4, r.title)
        .bind(5, r.text)
        .bind(6, r.status)
        .bind(7, r.reason)
        .bindOptional(8, r.resultJson)
        .bind(9, std::int64_t(r.edited ? 1 : 0))
        .bind(10, r.created.empty() ? now : r.created)
        .bind(11, now);
    const int rc = s.step();
    if (rc != SQLITE_DONE) return d->error(rc, "cannot add a node");
    return std::int64_t(sqlite3_last_insert_rowid(db));
}

Status SessionStore::updateNode(std::int64_t id, std::string_view status, std::string_view reason,
                                const std::optional<std::string> &resultJson)
{
    if (auto e = unusable(true)) return *e;
    if (resultJson && !nlohmann::json::accept(*resultJson)) return d->err("invalid", "the result is not JSON");
    Stmt s(d->db.get(), "UPDATE nodes SET status = ?, reason = ?, result_json = ?, updated = ? WHERE id = ?");
    s.bind(1, status).bind(2, reason).bindOptional(3, resultJson).bind(4, isoTimeNow()).bind(5, id);
    const int rc = s.step();
    if (rc != SQLITE_DONE) return d->error(rc, "cannot update node " + std::to_string(id));
    if (sqlite3_changes(d->db.get()) == 0) return d->err("not-found", "no node " + std::to_string(id));
    return Ok{};
}

Result<NodeRecord> SessionStore::node(std::int64_t id) const
{
    if (auto e = unusable(false)) return *e;
    Stmt s(d->db.get(), std::string("SELECT ") + kNodeColumns + " FROM nodes WHERE id = ?");
    s.bind(1, id);
    const int rc = s.step();
    if (rc == SQLITE_DONE) return d->err("not-found", "no node " + std::to_string(id));
    if (rc != SQLITE_ROW) return d->error(rc, "cannot read node " + std::to_string(id));
    auto n = readNode(s);
    if (!n) return d->err("damaged", "damaged: node " + std::to_string(id) + " has an unknown kind");
    return *n;
}

// Runs a node SELECT (with at most one int parameter) and reads every row.
static Result<std::vector<NodeRecord>> selectNodes(sqlite3 *db, const std::string &path, const std::string &where,
                                                   std::optional<std::int64_t> param)
{
    Stmt s(db, std::string("SELECT ") + kNodeColumns + " FROM nodes " + where + " ORDER BY id");
    if (param) s.bind(1, *param);
    std::vector<NodeRecord> out;
    int rc;
    while ((rc = s.step()) == SQLITE_ROW) {
        auto n = readNode(s);
        if (!n)
            return makeError("damaged", "damaged: node " + std::to_string(s.int64(0)) + " has an unknown kind",
                             path);
        out.push_back(std::move(*n));
    }
    if (rc != SQLITE_DONE) return sqlError(db, rc, path, "cannot read nodes");
    return out;
}

Result<std::vector<NodeRecord>> SessionStore::children(std::int64_t id) const
{
    if (auto e = unusable(false)) return *e;
    return selectNodes(d->db.get(), d->path, "WHERE parent = ?", id);
}

Result<std::vector<NodeRecord>> SessionStore::allNodes() const
{
    if (auto e = unusable(false)) return *e;
    return selectNodes(d->db.get(), d->path, "", std::nullopt);
}

Result<std::optional<NodeRecord>> SessionStore::root() const
{
    if (auto e = unusable(false)) return *e;
    auto roots = selectNodes(d->db.get(), d->path, "WHERE kind = 'root'", std::nullopt);
    if (!roots) return roots.error();
    if (roots->empty()) return std::optional<NodeRecord>();
    return std::optional<NodeRecord>(std::move(roots->front()));
}

Result<std::int64_t> SessionStore::appendLog(std::optional<std::int64_t> node, std::string_view text)
{
    if (auto e = unusable(true)) return *e;
    Stmt s(d->db.get(), "INSERT INTO logs(node, time, text) VALUES (?, ?, ?)");
    s.bindOptional(1, node).bind(2, isoTimeNow()).bind(3, text);
    const int rc = s.step();
    if ((rc & 0xff) == SQLITE_CONSTRAINT && node)
        return d->err("not-found", "no node " + std::to_string(*node) + " to log to");
    if (rc != SQLITE_DONE) return d->error(rc, "cannot write a log line");
    return std::int64_t(sqlite3_last_insert_rowid(d->db.get()));
}

static Result<std::vector<LogRecord>> selectLogs(sqlite3 *db, const std::string &path, const char *sql,
                                                 std::optional<std::int64_t> param)
{
    Stmt s(db, sql);
    if (param) s.bind(1, *param);
    std::vector<LogRecord> out;
    int rc;
    while ((rc = s.step()) == SQLITE_ROW) {
        LogRecord l;
        l.id = s.int64(0);
        if (!s.isNull(1)) l.node = s.int64(1);
        l.time = s.text(2);
        l.text = s.text(3);
        out.push_back(std::move(l));
    }
    if (rc != SQLITE_DONE) return sqlError(db, rc, path, "cannot read logs");
    return out;
}

Result<std::vector<LogRecord>> SessionStore::logs(std::int64_t node) const
{
    if (auto e = unusable(false)) return *e;
    return selectLogs(d->db.get(), d->path, "SELECT id, node, time, text FROM logs WHERE node = ? ORDER BY id", node);
}

Result<std::vector<LogRecord>> SessionStore::allLogs() const
{
    if (auto e = unusable(false)) return *e;
    return selectLogs(d->db.get(), d->path, "SELECT id, node, time, text FROM logs ORDER BY id", std::nullopt);
}

Result<std::int64_t> SessionStore::appendEvent(std::string_view kind, const nlohmann::json &data)
{
    if (auto e = unusable(true)) return *e;
    Stmt s(d->db.get(), "INSERT INTO events(time, kind, json) VALUES (?, ?, ?)");
    s.bind(1, isoTimeNow()).bind(2, kind).bind(3, dumpJson(data));
    const int rc = s.step();
    if (rc != SQLITE_DONE) return d->error(rc, "cannot write an event");
    return std::int64_t(sqlite3_last_insert_rowid(d->db.get()));
}

Result<std::vector<EventRecord>> SessionStore::events(std::int64_t afterId) const
{
    if (auto e = unusable(false)) return *e;
    Stmt s(d->db.get(), "SELECT id, time, kind, json FROM events WHERE id > ? ORDER BY id");
    s.bind(1, afterId);
    std::vector<EventRecord> out;
    int rc;
    while ((rc = s.step()) == SQLITE_ROW) {
        EventRecord e;
        e.id = s.int64(0);
        e.time = s.text(1);
        e.kind = s.text(2);
        auto j = parseJson(s.text(3));
        if (!j) return d->err("damaged", "damaged: event " + std::to_string(e.id) + " is not JSON");
        e.data = std::move(*j);
        out.push_back(std::move(e));
    }
    if (rc != SQLITE_DONE) return d->error(rc, "cannot read events");
    return out;
}

Result<std::int64_t> SessionStore::addExchange(const ExchangeRecord &r, const std::vector<std::int64_t> &nodes)
{
    if (auto e = unusable(true)) return *e;
    std::int64_t id = 0;
    Status done = transaction([&]() -> Status {
        Stmt s(d->db.get(), "INSERT INTO exchanges(round, purpose, generator, model, endpoint, request, prompt, "
                            "response, answer, reasoning, error, http_status, attempts, prompt_tokens, "
                            "completion_tokens, reasoning_tokens, cost, latency_ms, time, stop_reason, ending) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
        s.bind(1, std::int64_t(r.round))
            .bind(2, r.purpose)
            .bind(3, r.generator)
            .bind(4, r.model)
            .bind(5, r.endpoint)
            .bind(6, r.request)
            .bind(7, r.prompt)
            .bind(8, r.response)
            .bind(9, r.answer)
            .bind(10, r.reasoning)
            .bind(11, r.error)
            .bind(12, std::int64_t(r.httpStatus))
            .bind(13, std::int64_t(r.attempts))
            .bind(14, r.promptTokens)
            .bind(15, r.completionTokens)
            .bind(16, r.reasoningTokens)
            .bind(17, r.cost)
            .bind(18, r.latencyMs)
            .bind(19, r.time.empty() ? isoTimeNow() : r.time)
            .bind(20, r.stopReason)
            .bind(21, r.ending);
        const int rc = s.step();
        if (rc != SQLITE_DONE) return d->error(rc, "cannot store an exchange");
        id = std::int64_t(sqlite3_last_insert_rowid(d->db.get()));
        for (std::int64_t node : nodes)
            if (Status l = linkExchange(id, node); !l) return l;
        return Ok{};
    });
    if (!done) return done.error();
    return id;
}

Status SessionStore::linkExchange(std::int64_t exchange, std::int64_t node)
{
    if (auto e = unusable(true)) return *e;
    Stmt s(d->db.get(), "INSERT OR IGNORE INTO exchange_nodes(exchange, node) VALUES (?, ?)");
    s.bind(1, exchange).bind(2, node);
    const int rc = s.step();
    if ((rc & 0xff) == SQLITE_CONSTRAINT)
        return d->err("not-found", "no exchange " + std::to_string(exchange) + " or node " + std::to_string(node));
    if (rc != SQLITE_DONE) return d->error(rc, "cannot link an exchange");
    return Ok{};
}

namespace {

// Runs an exchange SELECT (kExchangeColumns, at most one int parameter) and fills in the links.
Result<std::vector<ExchangeRecord>> selectExchanges(sqlite3 *db, const std::string &path, int version,
                                                   const std::string &where, std::optional<std::int64_t> param)
{
    std::vector<ExchangeRecord> out;
    if (version < 2) return out; // a format 1 file read as it is: no model was ever asked
    Stmt s(db, std::string("SELECT ") + kExchangeColumns + ", " + (version >= 3 ? kStopColumns : kNoStopColumns) +
                   " FROM exchanges " + where + " ORDER BY id");
    if (param) s.bind(1, *param);
    int rc;
    while ((rc = s.step()) == SQLITE_ROW) {
        ExchangeRecord e;
        e.id = s.int64(0);
        e.round = int(s.int64(1));
        e.purpose = s.text(2);
        e.generator = s.text(3);
        e.model = s.text(4);
        e.endpoint = s.text(5);
        e.request = s.text(6);
        e.prompt = s.text(7);
        e.response = s.text(8);
        e.answer = s.text(9);
        e.reasoning = s.text(10);
        e.error = s.text(11);
        e.httpStatus = int(s.int64(12));
        e.attempts = int(s.int64(13));
        e.promptTokens = s.int64(14);
        e.completionTokens = s.int64(15);
        e.reasoningTokens = s.int64(16);
        e.cost = s.real(17);
        e.latencyMs = s.real(18);
        e.time = s.text(19);
        e.stopReason = s.text(20);
        e.ending = s.text(21);
        out.push_back(std::move(e));
    }
    if (rc != SQLITE_DONE) return sqlError(db, rc, path, "cannot read exchanges");
    for (auto &e : out) {
        Stmt l(db, "SELECT node FROM exchange_nodes WHERE exchange = ? ORDER BY node");
        l.bind(1, e.id);
        while ((rc = l.step()) == SQLITE_ROW) e.nodes.push_back(l.int64(0));
        if (rc != SQLITE_DONE) return sqlError(db, rc, path, "cannot read exchanges");
    }
    return out;
}

} // namespace

Result<ExchangeRecord> SessionStore::exchange(std::int64_t id) const
{
    if (auto e = unusable(false)) return *e;
    auto found = selectExchanges(d->db.get(), d->path, d->version, "WHERE id = ?", id);
    if (!found) return found.error();
    if (found->empty()) return d->err("not-found", "no exchange " + std::to_string(id));
    return std::move(found->front());
}

Result<std::vector<ExchangeRecord>> SessionStore::exchanges(std::int64_t node) const
{
    if (auto e = unusable(false)) return *e;
    return selectExchanges(d->db.get(), d->path, d->version,
                           "WHERE id IN (SELECT exchange FROM exchange_nodes WHERE node = ?)", node);
}

Result<std::vector<ExchangeRecord>> SessionStore::allExchanges() const
{
    if (auto e = unusable(false)) return *e;
    return selectExchanges(d->db.get(), d->path, d->version, "", std::nullopt);
}

Status SessionStore::transaction(const std::function<Status()> &body)
{
    if (auto e = unusable(true)) return *e;
    sqlite3 *db = d->db.get();
    const bool outer = sqlite3_get_autocommit(db) != 0;
    // IMMEDIATE takes the write lock up front, so a reader upgrading elsewhere cannot deadlock us.
    int rc = exec(db, outer ? "BEGIN IMMEDIATE" : "SAVEPOINT kf_tx");
    if (rc != SQLITE_OK) return d->error(rc, "cannot start a transaction");
    const auto undo = [&] { exec(db, outer ? "ROLLBACK" : "ROLLBACK TO kf_tx; RELEASE kf_tx"); };
    Status result = Ok{};
    try {
        result = body();
    } catch (...) {
        undo();
        throw;
    }
    if (!result) {
        undo();
        return result;
    }
    rc = exec(db, outer ? "COMMIT" : "RELEASE kf_tx");
    if (rc != SQLITE_OK) {
        const Error e = d->error(rc, "cannot commit");
        undo();
        return e;
    }
    return Ok{};
}

Status SessionStore::saveReadOnlyCopy(const std::string &dst, bool overwrite) const
{
    if (auto e = unusable(false)) return *e;
    std::error_code ec;
    if (fs::exists(dst, ec) && !overwrite) return makeError("exists", "the file already exists", dst);

    // Write beside the target and rename, so `dst` is never a half-written session.
    const std::string tmp = dst + ".partial";
    removeWithSidecars(tmp, ec);
    {
        Stmt s(d->db.get(), "VACUUM INTO ?");
        s.bind(1, std::string_view(tmp));
        const int rc = s.step();
        if (rc != SQLITE_DONE) {
            const Error e = sqlError(d->db.get(), rc, dst, "cannot write a copy");
            removeWithSidecars(tmp, ec);
            return e;
        }
    }
    // The copy keeps the source's WAL flag in its header; a read-only reader of a WAL file needs a
    // writable folder for the -shm index, so switch the copy to a rollback journal.
    {
        Opened o = openConnection(tmp, SQLITE_OPEN_READWRITE);
        if (!o.db) {
            removeWithSidecars(tmp, ec);
            return makeError("io", "cannot write a copy: " + o.message, dst);
        }
        const Scalar mode = scalar(o.db.get(), "PRAGMA journal_mode = DELETE");
        if (mode.rc != SQLITE_OK || mode.text != "delete") {
            const Error e = mode.rc != SQLITE_OK
                                ? sqlError(o.db.get(), mode.rc, dst, "cannot write a copy")
                                : makeError("io", "cannot set the copy's journal mode (it stays " + mode.text + ")", dst);
            o.db.reset();
            removeWithSidecars(tmp, ec);
            return e;
        }
    }
    fs::rename(tmp, dst, ec);
    if (ec) {
        std::error_code ignored;
        removeWithSidecars(tmp, ignored);
        return makeError("io", "cannot write a copy: " + ec.message(), dst);
    }
    // Sidecars of a previous file at dst would otherwise be taken as this copy's journal.
    for (const char *suffix : {"-wal", "-shm", "-journal"}) fs::remove(dst + suffix, ec);
    return Ok{};
}

Status SessionStore::exportReadOnlyCopy(const std::string &src, const std::string &dst, bool overwrite)
{
    auto store = open(src, true);
    if (!store) return store.error();
    return store->saveReadOnlyCopy(dst, overwrite);
}

} // namespace kf
