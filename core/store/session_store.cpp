// Creating, opening, closing and copying a session file, and transactions over it.
#include "store/session_store.h"

#include "store/db.h"
#include "store/schema.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <utility>
#include <vector>

namespace fs = std::filesystem;

namespace kf {

using namespace store;

namespace {

constexpr std::string_view kSqliteMagic{"SQLite format 3\0", 16};
// PRAGMA application_id: "KFss". Lets `file` and other tools recognise a session; the meta
// "format" key stays the authority.
constexpr int kApplicationId = 0x4B467373;

// A file name as an SQLite URI, for the immutable fallback of read-only opens.
std::string fileUri(const std::string &path, std::string_view query)
{
    std::error_code ec;
    fs::path abs = fs::absolute(path, ec);
    const std::string p = ec ? path : abs.string();
    std::string uri = "file:";
    static const char *hex = "0123456789ABCDEF";
    for (unsigned char c : p) {
        const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' ||
            c == '-' || c == '_' || c == '.' || c == '~';
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
    if (!in)
        return std::nullopt;
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
        if (one && !ec)
            ec = one;
    }
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
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                  tm.tm_hour, tm.tm_min, tm.tm_sec, int(ms % 1000));
    return buf;
}

SessionStore::SessionStore(std::unique_ptr<Impl> impl) : d(std::move(impl)) {}
SessionStore::SessionStore(SessionStore &&) noexcept = default;
SessionStore &SessionStore::operator=(SessionStore &&) noexcept = default;
SessionStore::~SessionStore() = default;

Result<SessionStore> SessionStore::create(const std::string &path, const SessionMeta &meta, bool overwrite)
{
    std::error_code ec;
    if (fs::exists(path, ec)) {
        if (!overwrite)
            return makeError(ErrorCode::Exists, "the file already exists", path);
        removeWithSidecars(path, ec);
        if (ec)
            return makeError(ErrorCode::Io, "cannot replace the file: " + ec.message(), path);
    } else {
        // Stale sidecars of an earlier file by this name would be read as this file's journal.
        removeWithSidecars(path, ec);
    }

    Opened o = openConnection(path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    if (!o.db)
        return makeError(ErrorCode::Io, "cannot create: " + o.message, path);

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
    if (mode.rc != SQLITE_OK)
        return failed(mode.rc, "cannot create");
    int rc = exec(db, "PRAGMA synchronous = FULL");
    if (rc == SQLITE_OK)
        rc = exec(db, "PRAGMA foreign_keys = ON");
    if (rc != SQLITE_OK)
        return failed(rc, "cannot create");

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
    if (rc != SQLITE_OK)
        return failed(rc, "cannot create");
    rc = exec(db, upgradeSql(0, kSessionFormatVersion));
    if (rc == SQLITE_OK) {
        const std::string pragmas = "PRAGMA user_version = " + std::to_string(kSessionFormatVersion) +
            "; PRAGMA application_id = " + std::to_string(kApplicationId) + ";";
        rc = exec(db, pragmas.c_str());
    }
    for (const auto &[key, value] : rows) {
        if (rc != SQLITE_OK)
            break;
        Stmt s(db, insertSql(kMeta));
        s.bind(param(kMeta, "key"), key).bind(param(kMeta, "value"), value);
        rc = s.step() == SQLITE_DONE ? SQLITE_OK : s.rc();
    }
    if (rc == SQLITE_OK && meta.baseline) {
        Stmt s(db, insertSql(kMeta));
        s.bind(param(kMeta, "key"), session_meta::Baseline).bind(param(kMeta, "value"), dumpJson(*meta.baseline));
        rc = s.step() == SQLITE_DONE ? SQLITE_OK : s.rc();
    }
    if (rc == SQLITE_OK)
        rc = exec(db, "COMMIT");
    // No ROLLBACK first: closing the connection rolls back, and a successful ROLLBACK would leave
    // the connection's message saying "not an error" where the failure should be named.
    if (rc != SQLITE_OK)
        return failed(rc, "cannot create");
    return SessionStore(std::move(impl));
}

Result<SessionStore> SessionStore::open(const std::string &path, bool readOnly)
{
    std::error_code ec;
    const auto st = fs::status(path, ec);
    if (!fs::exists(st))
        return makeError(ErrorCode::Io, "no such file", path);
    if (fs::is_directory(st))
        return makeError(ErrorCode::Io, "a folder, not a session file", path);

    // Look at the header ourselves: SQLite would take an empty file for an empty database and
    // describe any other file only as "not a database".
    const auto head = readHeader(path);
    if (!head)
        return makeError(ErrorCode::Io, "cannot read the file", path);
    if (head->empty())
        return makeError(ErrorCode::Format, "not a KernelForge session (the file is empty)", path);
    if (head->compare(0, kSqliteMagic.size(), kSqliteMagic) != 0)
        return makeError(ErrorCode::Format, "not a KernelForge session (not an SQLite database)", path);
    if (head->size() < 100)
        return makeError(ErrorCode::Damaged, "damaged: the file ends inside its header", path);
    // Header bytes 18 and 19 are 2 in WAL mode.
    const bool walFile = (*head)[18] == 2 || (*head)[19] == 2;

    const int flags = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
    Opened o = openConnection(path, flags);
    if (!o.db)
        return makeError(ErrorCode::Io, "cannot open: " + o.message, path);
    Checked c = checkSession(o.db.get(), path);

    const auto readOnlyHere = [&] {
        return makeError(ErrorCode::ReadOnly,
                         "cannot open for writing (the file or its folder is read-only); open it read-only", path);
    };
    const int code = c.rc & 0xff;
    if (c.error && (code == SQLITE_CANTOPEN || code == SQLITE_READONLY || code == SQLITE_IOERR)) {
        // SQLite quietly opens a write-protected file read-only and fails only when it needs to write.
        if (!readOnly && sqlite3_db_readonly(o.db.get(), "main") == 1)
            return readOnlyHere();
        // Reading a WAL file needs its -shm index, which cannot be made in a read-only folder. When
        // no write-ahead log holds changes, the main file is the whole session: read it as immutable.
        if (readOnly && walFile) {
            const auto walSize = fs::file_size(path + "-wal", ec);
            if (!ec && walSize > 0)
                return makeError(ErrorCode::Io,
                                 "cannot read: its write-ahead log (-wal) holds changes and its folder is "
                                 "read-only; copy the session to a writable folder",
                                 path);
            o.db.reset();
            o = openConnection(fileUri(path, "immutable=1"), SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
            if (!o.db)
                return makeError(ErrorCode::Io, "cannot open: " + o.message, path);
            c = checkSession(o.db.get(), path);
        }
    }
    if (c.error)
        return *c.error;

    auto impl = std::make_unique<Impl>();
    impl->db = std::move(o.db);
    impl->path = path;
    impl->readOnly = readOnly;
    impl->version = c.version;
    sqlite3 *db = impl->db.get();

    if (!readOnly) {
        // Say so now, not at the first write.
        if (sqlite3_db_readonly(db, "main") == 1)
            return readOnlyHere();
        const Scalar mode = scalar(db, "PRAGMA journal_mode = WAL");
        if (mode.rc != SQLITE_OK)
            return impl->error(mode.rc, "cannot open for writing");
        if (mode.text != "wal")
            return makeError(ErrorCode::Io,
                             "cannot switch to write-ahead logging (journal mode stays " + mode.text + ")", path);
        int rc = exec(db, "PRAGMA synchronous = FULL");
        if (rc == SQLITE_OK)
            rc = exec(db, "PRAGMA foreign_keys = ON");
        if (rc != SQLITE_OK)
            return impl->error(rc, "cannot open for writing");
        // Older formats are brought up to this one before anything else is written, in one
        // transaction: a file is either still in its old format or wholly in this one.
        if (impl->version < kSessionFormatVersion) {
            if (auto e = migrate(db, path, impl->version))
                return *e;
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
    if (!d || !d->db)
        return Ok{};
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
    if (!d || !d->db)
        return makeError(ErrorCode::Closed, "the session is closed", d ? d->path : std::string());
    if (forWrite && d->readOnly)
        return d->err(ErrorCode::ReadOnly, "the session is open read-only");
    return std::nullopt;
}

Status SessionStore::transaction(const std::function<Status()> &body)
{
    if (auto e = unusable(true))
        return *e;
    sqlite3 *db = d->db.get();
    const bool outer = sqlite3_get_autocommit(db) != 0;
    // IMMEDIATE takes the write lock up front, so a reader upgrading elsewhere cannot deadlock us.
    int rc = exec(db, outer ? "BEGIN IMMEDIATE" : "SAVEPOINT kf_tx");
    if (rc != SQLITE_OK)
        return d->error(rc, "cannot start a transaction");
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
    if (auto e = unusable(false))
        return *e;
    std::error_code ec;
    if (fs::exists(dst, ec) && !overwrite)
        return makeError(ErrorCode::Exists, "the file already exists", dst);

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
            return makeError(ErrorCode::Io, "cannot write a copy: " + o.message, dst);
        }
        const Scalar mode = scalar(o.db.get(), "PRAGMA journal_mode = DELETE");
        if (mode.rc != SQLITE_OK || mode.text != "delete") {
            const Error e = mode.rc != SQLITE_OK
                ? sqlError(o.db.get(), mode.rc, dst, "cannot write a copy")
                : makeError(ErrorCode::Io, "cannot set the copy's journal mode (it stays " + mode.text + ")", dst);
            o.db.reset();
            removeWithSidecars(tmp, ec);
            return e;
        }
    }
    fs::rename(tmp, dst, ec);
    if (ec) {
        std::error_code ignored;
        removeWithSidecars(tmp, ignored);
        return makeError(ErrorCode::Io, "cannot write a copy: " + ec.message(), dst);
    }
    // Sidecars of a previous file at dst would otherwise be taken as this copy's journal.
    for (const char *suffix : {"-wal", "-shm", "-journal"})
        fs::remove(dst + suffix, ec);
    return Ok{};
}

Status SessionStore::exportReadOnlyCopy(const std::string &src, const std::string &dst, bool overwrite)
{
    auto store = open(src, true);
    if (!store)
        return store.error();
    return store->saveReadOnlyCopy(dst, overwrite);
}

} // namespace kf
