// The session store: round trips, read-only shipping copies, damaged and foreign files, and
// surviving a SIGKILL in the middle of writing.
#include "search/session_setup.h"
#include "store/session_store.h"

#include <QCoreApplication>
#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

using namespace kf;
namespace fs = std::filesystem;

namespace {

constexpr const char *kWriterFlag = "--write-nodes";
constexpr const char *kReaderFlag = "--read-as-other-user";
constexpr int kLogsPerCandidate = 3;

SessionMeta sampleMeta()
{
    SessionMeta m;
    m.problemName = "softmax";
    m.problemText = "name = \"softmax\"\n[reference]\nsource = '''\ndef forward(x: Tensor) -> Tensor:\n"
                    "    return torch.softmax(x, dim=1)\n'''\n";
    m.problemVariant = "small";
    m.generator = "builtin";
    m.settings = {{"rounds", 3},
                  {"ideas", 4},
                  {"implementations", 2},
                  {"policy", "strict"},
                  {"worker", {"ssh", "gpuhost", "kernelforge-worker"}}};
    m.gpuName = "NVIDIA H200";
    m.writer = "KernelForge test";
    return m;
}

std::string candidateSource(int i)
{
    std::string s = "// @precision fp32\n// @launch k grid(cdiv(x.numel, 256)) block(256) args(x, out)\n"
                    "extern \"C\" __global__ void k(const float* x, float* out) { /* variant " +
        std::to_string(i) + " */ }\n";
    // Padding makes the file span many pages, so truncation and scribbles hit real data.
    s += "// " + std::string(1500, char('a' + i % 26)) + "\n";
    return s;
}

NodeRecord makeNode(NodeKind kind, std::optional<std::int64_t> parent, int round, std::string title,
                    std::string text = {})
{
    NodeRecord n;
    n.kind = kind;
    n.parent = parent;
    n.round = round;
    n.title = std::move(title);
    n.text = std::move(text);
    return n;
}

std::string p(const QTemporaryDir &dir, const char *name) { return dir.filePath(name).toStdString(); }

QStringList entries(const std::string &folder)
{
    return QDir(QString::fromStdString(folder)).entryList(QDir::Files | QDir::Hidden | QDir::System, QDir::Name);
}

void writeFile(const std::string &path, const std::string &bytes)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
}

void overwrite(const std::string &path, std::size_t offset, const std::string &bytes)
{
    std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(std::streamoff(offset));
    f.write(bytes.data(), std::streamsize(bytes.size()));
}

std::string readFile(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

// Runs SQL on a file with plain SQLite, to forge files the store would never write.
bool rawExec(const std::string &path, const std::string &sql)
{
    sqlite3 *db = nullptr;
    bool ok = sqlite3_open(path.c_str(), &db) == SQLITE_OK &&
        sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK;
    sqlite3_close(db);
    return ok;
}

// The schema text a file keeps (sqlite_master), in the order it was made.
std::vector<std::string> schemaText(const std::string &path)
{
    std::vector<std::string> out;
    sqlite3 *db = nullptr;
    sqlite3_stmt *s = nullptr;
    if (sqlite3_open(path.c_str(), &db) == SQLITE_OK &&
        sqlite3_prepare_v2(db, "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid", -1, &s, nullptr) ==
            SQLITE_OK)
        while (sqlite3_step(s) == SQLITE_ROW)
            out.emplace_back(reinterpret_cast<const char *>(sqlite3_column_text(s, 0)));
    sqlite3_finalize(s);
    sqlite3_close(db);
    return out;
}

// A small tree: root, two rounds, ideas, candidates (one evaluated, one failed, one hand-edited),
// logs and events. Returns the ids in creation order.
std::vector<std::int64_t> buildTree(SessionStore &s, int candidates = 2)
{
    std::vector<std::int64_t> ids;
    auto add = [&](const NodeRecord &n) {
        auto id = s.addNode(n);
        if (!id)
            qFatal("addNode: %s", id.error().text().c_str());
        ids.push_back(*id);
        return *id;
    };
    const auto root = add(makeNode(NodeKind::Root, std::nullopt, 0, "softmax"));
    for (int r = 1; r <= 2; ++r) {
        const auto round = add(makeNode(NodeKind::Round, root, r, "Round " + std::to_string(r)));
        const auto idea = add(makeNode(NodeKind::Idea, round, r, "Vectorised loads",
                                       "Read x with float4 loads; one warp per row, \"quoted\" text, ünïcødé."));
        for (int c = 0; c < candidates; ++c) {
            NodeRecord n =
                makeNode(NodeKind::Candidate, idea, r, "impl " + std::to_string(c), candidateSource(r * 10 + c));
            n.status = "queued";
            add(n);
        }
    }
    return ids;
}

} // namespace

// Child-process modes: the kill test's writer, and a reader that runs as another user so that
// folder permissions apply even when the tests run as root.
static int runWriter(const char *path)
{
    auto s = SessionStore::create(path, sampleMeta(), true);
    if (!s) {
        std::fprintf(stderr, "%s\n", s.error().text().c_str());
        return 2;
    }
    auto root = s->addNode(makeNode(NodeKind::Root, std::nullopt, 0, "softmax"));
    if (!root)
        return 2;
    for (int i = 0; i < 1000000; ++i) {
        std::int64_t id = 0;
        const Status st = s->transaction([&]() -> Status {
            NodeRecord n =
                makeNode(NodeKind::Candidate, *root, i / 10, "impl " + std::to_string(i), candidateSource(i));
            auto added = s->addNode(n);
            if (!added)
                return added.error();
            id = *added;
            for (int l = 0; l < kLogsPerCandidate; ++l) {
                auto logged = s->appendLog(id, "line " + std::to_string(l));
                if (!logged)
                    return logged.error();
            }
            return s->updateNode(id, "correct", "", R"({"verdict":"correct"})");
        });
        if (!st) {
            std::fprintf(stderr, "%s\n", st.error().text().c_str());
            return 2;
        }
        // Printed only after the commit returned: every id the parent reads is durable.
        const std::string line = std::to_string(id) + "\n";
        if (::write(1, line.data(), line.size()) < 0)
            return 2;
    }
    return 0;
}

static int runReader(const char *path)
{
    if (::geteuid() == 0) {
        // "nobody": folder permission bits stop it, unlike root.
        if (::setgid(65534) != 0 || ::setuid(65534) != 0) {
            std::printf("cannot drop privileges\n");
            return 3;
        }
    }
    auto r = SessionStore::open(path, true);
    if (!r) {
        std::printf("read-only open: %s\n", r.error().text().c_str());
        return 1;
    }
    auto nodes = r->allNodes();
    auto logs = r->allLogs();
    if (!nodes || !logs) {
        std::printf("read: %s\n", (!nodes ? nodes.error() : logs.error()).text().c_str());
        return 1;
    }
    r->close();
    auto w = SessionStore::open(path, false);
    std::printf("nodes: %zu\nlogs: %zu\nwritable open: %s\n", nodes->size(), logs->size(),
                w ? "ok" : toString(w.error().code).c_str());
    return 0;
}

class TestSessionStore : public QObject {
    Q_OBJECT

private slots:
    void roundTrip();
    void createRefusesExisting();
    void openOrCreateKeepsWhatIsThere();
    void createNamesWhatFailed();
    void readOnlyRefusesWrites();
    void invalidWritesAreRefused();
    void transactionIsAllOrNothing();
    void exportedCopyOpensInReadOnlyFolder();
    void walSessionOpensInReadOnlyFolder();
    void truncatedFileIsDamaged();
    void scribbledHeader();
    void scribbledPagesNeverCrash();
    void foreignFiles_data();
    void foreignFiles();
    void newerFormatIsRefused();
    void formatTwoReadsAndMigrates();
    void schemaTextIsFormatThree();
    void missingFile();
    void survivesSigkill();

private:
    // Runs this binary as another user reading `path`; returns its exit code and output.
    std::pair<int, QString> readAsOtherUser(const std::string &path);
};

void TestSessionStore::roundTrip()
{
    QTemporaryDir dir;
    const std::string path = p(dir, "a.kfsession");
    SessionMeta meta = sampleMeta();
    std::vector<NodeRecord> nodes;
    std::vector<LogRecord> logs;
    std::vector<EventRecord> events;
    std::int64_t firstCandidate = 0, failedCandidate = 0, editedCandidate = 0, root = 0;
    const std::string result = R"({"verdict":"correct","timing":{"medianMs":1.25,"trials":100},"maxScaledError":3e-7})";
    {
        auto s = SessionStore::create(path, meta);
        QVERIFY2(s.ok(), s.ok() ? "" : s.error().text().c_str());
        QCOMPARE(s->formatVersion(), kSessionFormatVersion);
        QVERIFY(!s->readOnly());
        const auto ids = buildTree(*s);
        root = ids[0];
        firstCandidate = ids[3];
        failedCandidate = ids[4];
        QVERIFY(s->updateNode(firstCandidate, "correct", "", result).ok());
        QVERIFY(s->updateNode(failedCandidate, "compile error", "line 3: identifier \"foo\" is undefined", std::nullopt)
                    .ok());
        NodeRecord edited = makeNode(NodeKind::Candidate, firstCandidate, 1, "impl 0 (edited)", candidateSource(99));
        edited.edited = true;
        auto e = s->addNode(edited);
        QVERIFY(e.ok());
        editedCandidate = *e;
        QVERIFY(s->appendLog(firstCandidate, "compiled in 1.3 s: 32 registers, 0 spills").ok());
        QVERIFY(s->appendLog(std::nullopt, "search started").ok());
        QVERIFY(s->appendLog(firstCandidate, "correct: 5 trials, max scaled error 3e-7").ok());
        QVERIFY(s->appendEvent("round-started", {{"round", 1}}).ok());
        QVERIFY(s->appendEvent("stopped", {{"why", "rounds"}, {"best", firstCandidate}}).ok());
        const nlohmann::json baseline = {{"medianMs", 2.5}, {"trials", 100}};
        QVERIFY(s->setBaseline(baseline).ok());
        meta.baseline = baseline;
        QVERIFY(s->setMeta("note", "first try").ok());
        QVERIFY(s->setMeta("note", "second try").ok()); // replaces

        nodes = *s->allNodes();
        logs = *s->allLogs();
        events = *s->events();
        meta.created = *s->meta(session_meta::Created);
        QVERIFY(s->close().ok());
        QVERIFY(!s->allNodes().ok()); // closed
    }
    QCOMPARE(nodes.size(), std::size_t(10));
    QVERIFY(!fs::exists(path + "-wal")); // a clean close leaves one file

    for (const bool readOnly : {true, false}) {
        auto s = SessionStore::open(path, readOnly);
        QVERIFY2(s.ok(), s.ok() ? "" : s.error().text().c_str());
        QCOMPARE(s->readOnly(), readOnly);
        QCOMPARE(s->path(), path);
        QVERIFY(*s->allNodes() == nodes);
        QVERIFY(*s->allLogs() == logs);
        QVERIFY(*s->events() == events);
        QVERIFY(*s->sessionMeta() == meta);
        QCOMPARE(*s->meta("note"), std::string("second try"));
        QCOMPARE(*s->meta(session_meta::Format), std::string(kSessionFormatName));
        QCOMPARE(toString(s->meta("absent").error().code), std::string("not-found"));
        QCOMPARE(s->metaJson(session_meta::Settings)->at("ideas").get<int>(), 4);

        auto c1 = s->node(firstCandidate);
        QVERIFY(c1.ok());
        QCOMPARE(c1->status, std::string("correct"));
        QCOMPARE(*c1->resultJson, result);
        QCOMPARE(s->node(failedCandidate)->reason, std::string("line 3: identifier \"foo\" is undefined"));
        QVERIFY(!s->node(failedCandidate)->resultJson);
        QVERIFY(s->node(editedCandidate)->edited);
        QCOMPARE(*s->node(editedCandidate)->parent, firstCandidate);
        QCOMPARE(toString(s->node(12345).error().code), std::string("not-found"));

        auto r = s->root();
        QVERIFY(r.ok() && r->has_value());
        QCOMPARE((*r)->id, root);
        auto rounds = s->children(root);
        QCOMPARE(rounds->size(), std::size_t(2));
        QVERIFY((*rounds)[0].kind == NodeKind::Round);
        QCOMPARE((*rounds)[1].round, 2);
        const auto ideas = *s->children((*rounds)[0].id);
        QCOMPARE(ideas.size(), std::size_t(1));
        QCOMPARE(ideas[0].text, nodes[2].text);
        const auto cands = *s->children(ideas[0].id);
        QCOMPARE(cands.size(), std::size_t(2));
        QCOMPARE(cands[0].id, firstCandidate);
        QCOMPARE(s->children(editedCandidate)->size(), std::size_t(0));

        QCOMPARE(s->logs(firstCandidate)->size(), std::size_t(2));
        QCOMPARE(s->events(events[0].id)->size(), std::size_t(1));
        QCOMPARE((*s->events(events[0].id))[0].data.at("why").get<std::string>(), std::string("rounds"));
    }

    // Writes after a reopen go on from where the file was.
    auto s = SessionStore::open(path);
    QVERIFY(s.ok());
    auto id = s->addNode(makeNode(NodeKind::Round, root, 3, "Round 3"));
    QVERIFY(id.ok());
    QVERIFY(*id > nodes.back().id);
    QCOMPARE(s->allNodes()->size(), nodes.size() + 1);
}

// A problem text larger than SQLite keeps (a module problem with 1 GB of parameters) once failed
// as "cannot create: not an error": the bind failed unnoticed, the NOT NULL column refused the
// row, and the ROLLBACK that followed reset the connection's message.
// A session that is there is opened, one that is not is made, and a damaged one is its own error:
// never "exists", and never a new session written over it.
void TestSessionStore::openOrCreateKeepsWhatIsThere()
{
    QTemporaryDir dir;
    const std::string path = p(dir, "a.kfsession");
    {
        auto made = openOrCreateSession(path, sampleMeta());
        QVERIFY(made.ok());
        buildTree(*made);
    }
    SessionMeta other = sampleMeta();
    other.problemName = "another";
    auto again = openOrCreateSession(path, other);
    QVERIFY(again.ok());
    QCOMPARE(again->allNodes()->size(), std::size_t(9));
    QCOMPARE(again->sessionMeta()->problemName, sampleMeta().problemName);

    const std::string damaged = p(dir, "damaged.kfsession");
    writeFile(damaged, std::string(4096, 'x'));
    auto bad = openOrCreateSession(damaged, sampleMeta());
    QVERIFY(!bad.ok());
    QVERIFY2(bad.error().code != ErrorCode::Exists, bad.error().text().c_str());
    QCOMPARE(bad.error().where, damaged);
}

void TestSessionStore::createNamesWhatFailed()
{
    QTemporaryDir dir;
    const std::string path = p(dir, "huge.kfsession");
    SessionMeta meta = sampleMeta();
    meta.problemText.assign(1'000'000'001, 'x'); // SQLite's default limit is 10^9 bytes
    auto s = SessionStore::create(path, meta);
    QVERIFY(!s.ok());
    const QString message = QString::fromStdString(s.error().text());
    QVERIFY2(!message.contains("not an error"), qPrintable(message));
    QVERIFY2(message.contains("cannot create: a value is larger than a session can hold"), qPrintable(message));
    QCOMPARE(toString(s.error().code), std::string("too-large"));
    QVERIFY(!fs::exists(path)); // nothing half made is left behind
}

void TestSessionStore::createRefusesExisting()
{
    QTemporaryDir dir;
    const std::string path = p(dir, "a.kfsession");
    {
        auto s = SessionStore::create(path, sampleMeta());
        QVERIFY(s.ok());
        buildTree(*s);
    }
    auto again = SessionStore::create(path, sampleMeta());
    QVERIFY(!again.ok());
    QCOMPARE(toString(again.error().code), std::string("exists"));
    QCOMPARE(again.error().where, path);
    QCOMPARE(SessionStore::open(path)->allNodes()->size(), std::size_t(9)); // untouched

    auto fresh = SessionStore::create(path, sampleMeta(), true);
    QVERIFY(fresh.ok());
    QCOMPARE(fresh->allNodes()->size(), std::size_t(0));

    auto inFolder = SessionStore::create(p(dir, "no/such/folder/a.kfsession"), sampleMeta());
    QVERIFY(!inFolder.ok());
    QCOMPARE(toString(inFolder.error().code), std::string("io"));
}

void TestSessionStore::readOnlyRefusesWrites()
{
    QTemporaryDir dir;
    const std::string path = p(dir, "a.kfsession");
    {
        auto s = SessionStore::create(path, sampleMeta());
        buildTree(*s);
    }
    auto s = SessionStore::open(path, true);
    QVERIFY(s.ok());
    const auto before = *s->allNodes();
    QCOMPARE(toString(s->addNode(makeNode(NodeKind::Round, before[0].id, 9, "x")).error().code),
             std::string("read-only"));
    QCOMPARE(toString(s->updateNode(before[0].id, "correct", "", std::nullopt).error().code), std::string("read-only"));
    QCOMPARE(toString(s->setMeta("note", "x").error().code), std::string("read-only"));
    QCOMPARE(toString(s->appendLog(std::nullopt, "x").error().code), std::string("read-only"));
    QCOMPARE(toString(s->appendEvent("x", {}).error().code), std::string("read-only"));
    QVERIFY(!s->transaction([] { return Status(Ok{}); }).ok());
    QVERIFY(*s->allNodes() == before);
}

void TestSessionStore::invalidWritesAreRefused()
{
    QTemporaryDir dir;
    auto s = SessionStore::create(p(dir, "a.kfsession"), sampleMeta());
    QVERIFY(s.ok());
    const auto root = *s->addNode(makeNode(NodeKind::Root, std::nullopt, 0, "softmax"));

    QCOMPARE(toString(s->addNode(makeNode(NodeKind::Round, 999, 1, "orphan")).error().code), std::string("not-found"));
    QCOMPARE(toString(s->addNode(makeNode(NodeKind::Idea, std::nullopt, 1, "no parent")).error().code),
             std::string("invalid"));
    QCOMPARE(toString(s->addNode(makeNode(NodeKind::Root, root, 0, "root below root")).error().code),
             std::string("invalid"));
    NodeRecord bad = makeNode(NodeKind::Candidate, root, 1, "bad result");
    bad.resultJson = "{not json";
    QCOMPARE(toString(s->addNode(bad).error().code), std::string("invalid"));
    QCOMPARE(toString(s->updateNode(root, "correct", "", std::string("[1,")).error().code), std::string("invalid"));
    QCOMPARE(toString(s->updateNode(999, "correct", "", std::nullopt).error().code), std::string("not-found"));
    QCOMPARE(toString(s->appendLog(999, "x").error().code), std::string("not-found"));
    QCOMPARE(toString(s->setMeta(session_meta::Format, "other").error().code), std::string("invalid"));
    QCOMPARE(*s->meta(session_meta::Format), std::string(kSessionFormatName));
    QCOMPARE(s->allNodes()->size(), std::size_t(1));

    // Moved-from and closed stores answer with errors, not crashes.
    SessionStore moved = std::move(*s);
    QCOMPARE(toString(s->allNodes().error().code), std::string("closed"));
    QVERIFY(moved.close().ok());
    QCOMPARE(toString(moved.addNode(makeNode(NodeKind::Root, std::nullopt, 0, "x")).error().code),
             std::string("closed"));
}

void TestSessionStore::transactionIsAllOrNothing()
{
    QTemporaryDir dir;
    auto s = SessionStore::create(p(dir, "a.kfsession"), sampleMeta());
    const auto root = *s->addNode(makeNode(NodeKind::Root, std::nullopt, 0, "softmax"));

    const Status failed = s->transaction([&]() -> Status {
        auto id = s->addNode(makeNode(NodeKind::Round, root, 1, "Round 1"));
        if (!id)
            return id.error();
        if (!s->appendLog(*id, "started"))
            return makeError(ErrorCode::Cancelled, "log");
        return makeError(ErrorCode::Cancelled, "changed my mind");
    });
    QCOMPARE(toString(failed.error().code), std::string("cancelled"));
    QCOMPARE(s->allNodes()->size(), std::size_t(1));
    QCOMPARE(s->allLogs()->size(), std::size_t(0));

    // Nested: the inner part rolls back alone.
    const Status outer = s->transaction([&]() -> Status {
        if (!s->addNode(makeNode(NodeKind::Round, root, 1, "kept")))
            return makeError(ErrorCode::Cancelled, "add");
        const Status inner = s->transaction([&]() -> Status {
            s->addNode(makeNode(NodeKind::Round, root, 2, "dropped"));
            return makeError(ErrorCode::Cancelled, "inner");
        });
        return inner.ok() ? makeError(ErrorCode::Cancelled, "inner should fail") : Status(Ok{});
    });
    QVERIFY(outer.ok());
    const auto all = *s->allNodes();
    QCOMPARE(all.size(), std::size_t(2));
    QCOMPARE(all[1].title, std::string("kept"));
}

std::pair<int, QString> TestSessionStore::readAsOtherUser(const std::string &path)
{
    QProcess proc;
    proc.setProcessChannelMode(QProcess::MergedChannels);
    proc.start(QCoreApplication::applicationFilePath(), {kReaderFlag, QString::fromStdString(path)});
    if (!proc.waitForFinished(60000))
        return {-1, "reader did not finish"};
    return {proc.exitStatus() == QProcess::NormalExit ? proc.exitCode() : -1, QString::fromUtf8(proc.readAll())};
}

void TestSessionStore::exportedCopyOpensInReadOnlyFolder()
{
    QTemporaryDir dir;
    const std::string src = p(dir, "src.kfsession");
    std::vector<NodeRecord> nodes;
    {
        auto s = SessionStore::create(src, sampleMeta());
        buildTree(*s);
        s->appendLog(std::nullopt, "done");
        nodes = *s->allNodes();
        // Exported while the writer still has it open in WAL mode.
        QVERIFY(fs::exists(src + "-wal"));
        QVERIFY(s->saveReadOnlyCopy(p(dir, "live-copy.kfsession")).ok());
    }
    const std::string folder = p(dir, "examples");
    QVERIFY(QDir().mkpath(QString::fromStdString(folder)));
    const std::string dst = folder + "/softmax.kfsession";
    const Status exported = SessionStore::exportReadOnlyCopy(src, dst);
    QVERIFY2(exported.ok(), exported.ok() ? "" : exported.error().text().c_str());
    QCOMPARE(toString(SessionStore::exportReadOnlyCopy(src, dst).error().code), std::string("exists"));
    QVERIFY(SessionStore::exportReadOnlyCopy(src, dst, true).ok());
    QCOMPARE(entries(folder), QStringList{"softmax.kfsession"});

    // Header bytes 18 and 19 are 1 for a rollback journal (2 would be WAL).
    const std::string head = readFile(dst).substr(0, 100);
    QCOMPARE(int(head[18]), 1);
    QCOMPARE(int(head[19]), 1);

    QVERIFY(::chmod(dir.path().toLocal8Bit().constData(), 0755) == 0);
    QVERIFY(::chmod(folder.c_str(), 0555) == 0);
    {
        auto s = SessionStore::open(dst, true);
        QVERIFY2(s.ok(), s.ok() ? "" : s.error().text().c_str());
        QVERIFY(*s->allNodes() == nodes);
        QCOMPARE(s->allLogs()->size(), std::size_t(1));
        QCOMPARE(s->sessionMeta()->problemName, std::string("softmax"));
        QCOMPARE(entries(folder), QStringList{"softmax.kfsession"}); // no -wal, -shm or -journal
    }
    QVERIFY(*SessionStore::open(p(dir, "live-copy.kfsession"), true)->allNodes() == nodes);

    // As a user whom the folder's permission bits stop (root ignores them).
    const auto [rc, out] = readAsOtherUser(dst);
    ::chmod(folder.c_str(), 0755);
    if (rc == 3)
        QSKIP("cannot switch to another user here");
    QVERIFY2(rc == 0, qPrintable(out));
    QVERIFY2(out.contains(QString("nodes: %1\n").arg(nodes.size())), qPrintable(out));
    QVERIFY2(out.contains("writable open: read-only"), qPrintable(out));
    QCOMPARE(entries(folder), QStringList{"softmax.kfsession"});
}

void TestSessionStore::walSessionOpensInReadOnlyFolder()
{
    // A WAL file that was closed cleanly, in a folder where no -shm can be made: still readable.
    QTemporaryDir dir;
    const std::string folder = p(dir, "ro");
    QVERIFY(QDir().mkpath(QString::fromStdString(folder)));
    const std::string path = folder + "/a.kfsession";
    {
        auto s = SessionStore::create(path, sampleMeta());
        buildTree(*s);
    }
    QCOMPARE(int(readFile(path)[18]), 2);
    QCOMPARE(entries(folder), QStringList{"a.kfsession"});
    QVERIFY(::chmod(dir.path().toLocal8Bit().constData(), 0755) == 0);
    QVERIFY(::chmod(folder.c_str(), 0555) == 0);
    const auto [rc, out] = readAsOtherUser(path);
    const QStringList after = entries(folder);
    ::chmod(folder.c_str(), 0755);
    if (rc == 3)
        QSKIP("cannot switch to another user here");
    QVERIFY2(rc == 0, qPrintable(out));
    QVERIFY2(out.contains("nodes: 9\n"), qPrintable(out));
    QCOMPARE(after, QStringList{"a.kfsession"});
}

void TestSessionStore::truncatedFileIsDamaged()
{
    QTemporaryDir dir;
    const std::string path = p(dir, "a.kfsession");
    {
        auto s = SessionStore::create(path, sampleMeta());
        buildTree(*s, 100);
    }
    const auto size = fs::file_size(path);
    QVERIFY(size > 64 * 1024);
    fs::resize_file(path, size / 2);
    for (const bool readOnly : {true, false}) {
        auto s = SessionStore::open(path, readOnly);
        QVERIFY(!s.ok());
        QCOMPARE(toString(s.error().code), std::string("damaged"));
        QVERIFY2(s.error().message.starts_with("damaged: "), s.error().message.c_str());
        QCOMPARE(s.error().where, path);
        QVERIFY(s.error().text().starts_with(path + ": damaged"));
    }
    // Cut inside the 100-byte header.
    fs::resize_file(path, 50);
    QCOMPARE(toString(SessionStore::open(path, true).error().code), std::string("damaged"));
}

void TestSessionStore::scribbledHeader()
{
    QTemporaryDir dir;
    const std::string path = p(dir, "a.kfsession");
    {
        auto s = SessionStore::create(path, sampleMeta());
        buildTree(*s);
    }
    const std::string good = readFile(path);

    // The SQLite fields after the magic string (page size, sizes, counters): damaged.
    overwrite(path, 16, std::string(84, '\xff'));
    auto s = SessionStore::open(path, true);
    QVERIFY(!s.ok());
    QCOMPARE(toString(s.error().code), std::string("damaged"));
    QVERIFY2(s.error().message.starts_with("damaged: "), s.error().message.c_str());

    // The magic string itself: nothing says this was ever a session.
    writeFile(path, good);
    overwrite(path, 0, "0123456789abcdef");
    s = SessionStore::open(path, true);
    QVERIFY(!s.ok());
    QCOMPARE(toString(s.error().code), std::string("format"));
    QVERIFY(s.error().message.starts_with("not a KernelForge session"));
}

void TestSessionStore::scribbledPagesNeverCrash()
{
    QTemporaryDir dir;
    const std::string path = p(dir, "a.kfsession");
    {
        auto s = SessionStore::create(path, sampleMeta());
        buildTree(*s, 20);
        for (int i = 0; i < 20; ++i)
            s->appendLog(std::nullopt, "line " + std::to_string(i));
    }
    const std::string good = readFile(path);
    int refused = 0;
    for (unsigned seed = 1; seed <= 40; ++seed) {
        std::mt19937 rng(seed);
        std::string bad = good;
        // Past the 100-byte header: garbage in b-tree pages, the sqlite_master page included.
        for (int hit = 0; hit < 8; ++hit) {
            const std::size_t at = 100 + rng() % (bad.size() - 164);
            for (int k = 0; k < 64; ++k)
                bad[at + k] = char(rng());
        }
        writeFile(path, bad);
        auto s = SessionStore::open(path, seed % 2 == 0);
        if (!s.ok()) {
            ++refused;
            QVERIFY(!s.error().message.empty());
            QCOMPARE(s.error().where, path);
            continue;
        }
        // Whatever opened must answer every call with a value or an error.
        (void)s->allNodes();
        (void)s->allLogs();
        (void)s->events();
        (void)s->sessionMeta();
        (void)s->root();
    }
    QVERIFY(refused > 0);
}

void TestSessionStore::foreignFiles_data()
{
    QTest::addColumn<QString>("kind");
    QTest::newRow("text") << "text";
    QTest::newRow("random bytes") << "random";
    QTest::newRow("empty") << "empty";
    QTest::newRow("sqlite without meta") << "sqlite-plain";
    QTest::newRow("sqlite with other meta") << "sqlite-other-format";
    QTest::newRow("sqlite with other meta shape") << "sqlite-other-shape";
}

void TestSessionStore::foreignFiles()
{
    QFETCH(QString, kind);
    QTemporaryDir dir;
    const std::string path = p(dir, "foreign.kfsession");
    if (kind == "text") {
        writeFile(path, "name = \"softmax\"\ndescription = \"a problem file, not a session\"\n");
    } else if (kind == "random") {
        std::mt19937 rng(7);
        std::string bytes(8192, '\0');
        for (char &c : bytes)
            c = char(rng());
        writeFile(path, bytes);
    } else if (kind == "empty") {
        writeFile(path, "");
    } else if (kind == "sqlite-plain") {
        QVERIFY(rawExec(path, "CREATE TABLE t(a); INSERT INTO t VALUES (1);"));
    } else if (kind == "sqlite-other-format") {
        QVERIFY(rawExec(path,
                        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
                        "INSERT INTO meta VALUES ('format', 'some-other-tool');"));
    } else {
        QVERIFY(rawExec(path, "CREATE TABLE meta(a, b); INSERT INTO meta VALUES (1, 2);"));
    }
    const std::string before = readFile(path);
    for (const bool readOnly : {true, false}) {
        auto s = SessionStore::open(path, readOnly);
        QVERIFY(!s.ok());
        QCOMPARE(toString(s.error().code), std::string("format"));
        QVERIFY2(s.error().message.starts_with("not a KernelForge session"), s.error().message.c_str());
        QVERIFY(s.error().text().starts_with(path + ": not a KernelForge session"));
    }
    QVERIFY(readFile(path) == before); // looked at, never changed
    QCOMPARE(toString(SessionStore::exportReadOnlyCopy(path, p(dir, "copy.kfsession")).error().code),
             std::string("format"));
}

void TestSessionStore::newerFormatIsRefused()
{
    QTemporaryDir dir;
    const std::string path = p(dir, "a.kfsession");
    {
        auto s = SessionStore::create(path, sampleMeta());
        buildTree(*s);
    }
    const std::string newer = std::to_string(kSessionFormatVersion + 1);
    QVERIFY(rawExec(path, "PRAGMA user_version = " + newer));
    for (const bool readOnly : {true, false}) {
        auto s = SessionStore::open(path, readOnly);
        QVERIFY(!s.ok());
        QCOMPARE(toString(s.error().code), std::string("version"));
        QCOMPARE(s.error().message,
                 "written by a newer KernelForge (format " + newer + ", this reads up to " +
                     std::to_string(kSessionFormatVersion) + ")");
        QCOMPARE(s.error().where, path);
    }
}

// Format 2 kept no stop reason: such a file reads as it is when opened read-only (the fields
// empty), and gains the columns, in one step, on a writable open.
void TestSessionStore::formatTwoReadsAndMigrates()
{
    QTemporaryDir dir;
    const std::string path = p(dir, "two.kfsession");
    std::int64_t node = 0;
    {
        auto s = SessionStore::create(path, sampleMeta());
        node = buildTree(*s).front();
        ExchangeRecord e;
        e.purpose = "ideas";
        e.answer = "[]";
        e.stopReason = "end_turn";
        e.ending = "complete";
        QVERIFY(s->addExchange(e, {node}));
        QVERIFY(s->close());
    }
    QVERIFY(rawExec(path,
                    "ALTER TABLE exchanges DROP COLUMN stop_reason; ALTER TABLE exchanges DROP COLUMN ending; "
                    "PRAGMA user_version = 2"));
    {
        auto ro = SessionStore::open(path, true);
        QVERIFY2(ro, ro ? "" : ro.error().text().c_str());
        QCOMPARE(ro->formatVersion(), 2);
        auto old = ro->exchanges(node);
        QVERIFY(old && old->size() == 1);
        QCOMPARE(old->front().answer, std::string("[]"));
        QCOMPARE(old->front().stopReason, std::string());
        QCOMPARE(old->front().ending, std::string());
    }
    {
        auto rw = SessionStore::open(path);
        QVERIFY2(rw, rw ? "" : rw.error().text().c_str());
        QCOMPARE(rw->formatVersion(), kSessionFormatVersion);
        ExchangeRecord e;
        e.purpose = "implement";
        e.stopReason = "refusal";
        e.ending = "refused";
        QVERIFY(rw->addExchange(e, {node}));
        QVERIFY(rw->close());
    }
    auto again = SessionStore::open(path, true);
    QVERIFY(again);
    QCOMPARE(again->formatVersion(), kSessionFormatVersion);
    auto all = again->exchanges(node);
    QVERIFY(all && all->size() == 2);
    QCOMPARE((*all)[0].stopReason, std::string()); // rows of the old format stay as they were
    QCOMPARE((*all)[1].stopReason, std::string("refusal"));
    QCOMPARE((*all)[1].ending, std::string("refused"));
}

// The schema text that sqlite_master keeps is part of the file format: a new file's, and a format
// 1 file's once migrated, are byte for byte what format 3 files have always held.
void TestSessionStore::schemaTextIsFormatThree()
{
    const std::vector<std::string> expected = {
        "CREATE TABLE meta (\n    key   TEXT PRIMARY KEY NOT NULL,\n    value TEXT NOT NULL\n)",
        "CREATE TABLE nodes (\n"
        "    id          INTEGER PRIMARY KEY,\n"
        "    parent      INTEGER REFERENCES nodes(id),\n"
        "    kind        TEXT NOT NULL CHECK (kind IN ('root', 'round', 'idea', 'candidate')),\n"
        "    round       INTEGER NOT NULL DEFAULT 0,\n"
        "    title       TEXT NOT NULL DEFAULT '',\n"
        "    text        TEXT NOT NULL DEFAULT '',\n"
        "    status      TEXT NOT NULL DEFAULT '',\n"
        "    reason      TEXT NOT NULL DEFAULT '',\n"
        "    result_json TEXT,\n"
        "    edited      INTEGER NOT NULL DEFAULT 0,\n"
        "    created     TEXT NOT NULL,\n"
        "    updated     TEXT NOT NULL\n"
        ")",
        "CREATE INDEX nodes_parent ON nodes(parent)",
        "CREATE TABLE logs (\n"
        "    id   INTEGER PRIMARY KEY,\n"
        "    node INTEGER REFERENCES nodes(id),\n"
        "    time TEXT NOT NULL,\n"
        "    text TEXT NOT NULL\n"
        ")",
        "CREATE INDEX logs_node ON logs(node)",
        "CREATE TABLE events (\n"
        "    id   INTEGER PRIMARY KEY,\n"
        "    time TEXT NOT NULL,\n"
        "    kind TEXT NOT NULL,\n"
        "    json TEXT NOT NULL\n"
        ")",
        "CREATE TABLE exchanges (\n"
        "    id                INTEGER PRIMARY KEY,\n"
        "    round             INTEGER NOT NULL DEFAULT 0,\n"
        "    purpose           TEXT NOT NULL DEFAULT '',\n"
        "    generator         TEXT NOT NULL DEFAULT '',\n"
        "    model             TEXT NOT NULL DEFAULT '',\n"
        "    endpoint          TEXT NOT NULL DEFAULT '',\n"
        "    request           TEXT NOT NULL DEFAULT '',\n"
        "    prompt            TEXT NOT NULL DEFAULT '',\n"
        "    response          TEXT NOT NULL DEFAULT '',\n"
        "    answer            TEXT NOT NULL DEFAULT '',\n"
        "    reasoning         TEXT NOT NULL DEFAULT '',\n"
        "    error             TEXT NOT NULL DEFAULT '',\n"
        "    http_status       INTEGER NOT NULL DEFAULT 0,\n"
        "    attempts          INTEGER NOT NULL DEFAULT 0,\n"
        "    prompt_tokens     INTEGER NOT NULL DEFAULT 0,\n"
        "    completion_tokens INTEGER NOT NULL DEFAULT 0,\n"
        "    reasoning_tokens  INTEGER NOT NULL DEFAULT 0,\n"
        "    cost              REAL NOT NULL DEFAULT 0,\n"
        "    latency_ms        REAL NOT NULL DEFAULT 0,\n"
        "    time              TEXT NOT NULL\n"
        ", stop_reason TEXT NOT NULL DEFAULT '', ending TEXT NOT NULL DEFAULT '')",
        "CREATE TABLE exchange_nodes (\n"
        "    exchange INTEGER NOT NULL REFERENCES exchanges(id),\n"
        "    node     INTEGER NOT NULL REFERENCES nodes(id),\n"
        "    PRIMARY KEY (exchange, node)\n"
        ")",
        "CREATE INDEX exchange_nodes_node ON exchange_nodes(node)",
    };
    QTemporaryDir dir;
    const std::string path = p(dir, "three.kfsession");
    {
        auto s = SessionStore::create(path, sampleMeta());
        QVERIFY(s);
        buildTree(*s);
        QVERIFY(s->close());
    }
    QVERIFY(schemaText(path) == expected);

    QVERIFY(rawExec(path, "DROP TABLE exchange_nodes; DROP TABLE exchanges; PRAGMA user_version = 1"));
    {
        auto rw = SessionStore::open(path);
        QVERIFY2(rw, rw ? "" : rw.error().text().c_str());
        QCOMPARE(rw->formatVersion(), kSessionFormatVersion);
        QVERIFY(rw->close());
    }
    QVERIFY(schemaText(path) == expected);
}

void TestSessionStore::missingFile()
{
    QTemporaryDir dir;
    auto s = SessionStore::open(p(dir, "nothing.kfsession"), true);
    QVERIFY(!s.ok());
    QCOMPARE(toString(s.error().code), std::string("io"));
    QVERIFY(s.error().message.find("no such file") != std::string::npos);
    QVERIFY(!fs::exists(p(dir, "nothing.kfsession"))); // open never creates
    QCOMPARE(toString(SessionStore::open(dir.path().toStdString()).error().code), std::string("io"));
}

void TestSessionStore::survivesSigkill()
{
    QTemporaryDir dir;
    const std::string path = p(dir, "crash.kfsession");
    QProcess writer;
    writer.start(QCoreApplication::applicationFilePath(), {kWriterFlag, QString::fromStdString(path)});
    QVERIFY(writer.waitForStarted());

    // Kill it once it has reported a good number of commits, without warning.
    std::set<std::int64_t> reported;
    QByteArray pending;
    auto collect = [&] {
        pending += writer.readAllStandardOutput();
        qsizetype nl;
        while ((nl = pending.indexOf('\n')) >= 0) {
            reported.insert(pending.left(nl).toLongLong());
            pending.remove(0, nl + 1);
        }
    };
    QElapsedTimer timer;
    timer.start();
    while (reported.size() < 150 && timer.elapsed() < 60000 && writer.state() == QProcess::Running) {
        writer.waitForReadyRead(1000);
        collect();
    }
    QVERIFY2(writer.state() == QProcess::Running, writer.readAllStandardError().constData());
    writer.kill(); // SIGKILL
    QVERIFY(writer.waitForFinished(10000));
    collect();
    QVERIFY(reported.size() >= 150);
    QVERIFY(fs::exists(path + "-wal")); // it died without checkpointing

    // The same files in a read-only folder: the log's changes cannot be read without an -shm
    // index, so the reader must say so instead of showing the older main file.
    const std::string folder = p(dir, "ro");
    QVERIFY(QDir().mkpath(QString::fromStdString(folder)));
    fs::copy_file(path, folder + "/crash.kfsession");
    fs::copy_file(path + "-wal", folder + "/crash.kfsession-wal");
    QVERIFY(::chmod(dir.path().toLocal8Bit().constData(), 0755) == 0);
    QVERIFY(::chmod(folder.c_str(), 0555) == 0);
    const auto [rc, out] = readAsOtherUser(folder + "/crash.kfsession");
    ::chmod(folder.c_str(), 0755);
    if (rc != 3) {
        QVERIFY2(rc == 1, qPrintable(out));
        QVERIFY2(out.contains("write-ahead log"), qPrintable(out));
    }

    for (const bool readOnly : {true, false}) {
        auto s = SessionStore::open(path, readOnly);
        QVERIFY2(s.ok(), s.ok() ? "" : s.error().text().c_str());
        const auto nodes = *s->allNodes();
        std::set<std::int64_t> present;
        for (const auto &n : nodes)
            present.insert(n.id);
        for (auto id : reported)
            QVERIFY2(present.count(id), qPrintable(QString("lost node %1").arg(id)));
        // Each candidate's transaction landed whole or not at all.
        for (const auto &n : nodes) {
            if (n.kind != NodeKind::Candidate)
                continue;
            QCOMPARE(n.status, std::string("correct"));
            QCOMPARE(s->logs(n.id)->size(), std::size_t(kLogsPerCandidate));
        }
        if (!readOnly)
            QVERIFY(s->addNode(makeNode(NodeKind::Round, nodes[0].id, 99, "after the crash")).ok());
    }
}

int main(int argc, char **argv)
{
    if (argc >= 3 && std::string_view(argv[1]) == kWriterFlag)
        return runWriter(argv[2]);
    if (argc >= 3 && std::string_view(argv[1]) == kReaderFlag)
        return runReader(argv[2]);
    QCoreApplication app(argc, argv);
    TestSessionStore test;
    return QTest::qExec(&test, argc, argv);
}

#include "test_session_store.moc"
