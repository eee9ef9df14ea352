// kernelforge-cli suite against the fake worker (which reports a softmax graph over an input x and
// times every kernel at 0.5 ms against an eager 2 ms) with the built-in generator: a whole run with
// failures, a run interrupted and resumed, torch.compile timed by a stand-in Python, the overhead
// of each problem beyond its budget, a module problem too large to copy into its session, and,
// with the real worker on a machine without a GPU, the fail-fast error and a compile-only run.
#include "problem/problem.h"
#include "search/trajectory.h"
#include "store/session_store.h"
#include "suite/suite_runner.h"
#include "suite/suite_state.h"

#include <QtCore/QDir>
#include <QtCore/QElapsedTimer>
#include <QtCore/QFile>
#include <QtCore/QFileInfo>
#include <QtCore/QProcess>
#include <QtCore/QProcessEnvironment>
#include <QtCore/QRegularExpression>
#include <QtCore/QTemporaryDir>
#include <QtCore/QThread>
#include <QtTest/QTest>

using namespace kf;

namespace {

struct Run {
    int code = -1;
    QString out, err;
};

QString cli() { return qEnvironmentVariable("KERNELFORGE_CLI"); }

Run suite(const QStringList &args, int timeoutMs = 120000, const QStringList &env = {})
{
    QProcess p;
    QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
    for (const QString &kv : env)
        e.insert(kv.section('=', 0, 0), kv.section('=', 1));
    p.setProcessEnvironment(e);
    p.start(cli(), QStringList{"suite"} + args);
    p.waitForFinished(timeoutMs);
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
            p.readAllStandardError()};
}

QString dataDir() { return QStringLiteral(KF_SOURCE_DIR "/tests/data/suite"); }

SuiteState stateIn(const QString &out)
{
    auto s = readSuiteState(QDir(out).filePath("suite.json").toStdString());
    if (!s)
        return {};
    return *s;
}

const SuiteEntry *entry(const SuiteState &s, const std::string &file)
{
    for (const auto &e : s.problems)
        if (e.file == file)
            return &e;
    return nullptr;
}

int roundsIn(const QString &session)
{
    auto store = SessionStore::open(session.toStdString(), true);
    if (!store)
        return -1;
    auto t = readTrajectory(*store);
    return t ? int(t->rows.size()) : -1;
}

void copyProblem(const QString &name, const QString &dir, const QString &as)
{
    QVERIFY(QFile::copy(dataDir() + "/" + name, dir + "/" + as));
}

// The environment that makes the suite time torch.compile with tests/suite/fake_python.sh.
QStringList fakePython(const QString &log, int startMs = 0, int answerMs = 0)
{
    return {"KERNELFORGE_PYTHON=" KF_SOURCE_DIR "/tests/suite/fake_python.sh", "KF_FAKE_PYTHON_LOG=" + log,
            "KF_FAKE_PYTHON_START_MS=" + QString::number(startMs), "KF_FAKE_PYTHON_MS=" + QString::number(answerMs)};
}

QStringList linesOf(const QString &path, const QString &prefix)
{
    QFile f(path);
    QStringList out;
    if (f.open(QIODevice::ReadOnly))
        for (const QString &line : QString(f.readAll()).split('\n'))
            if (line.startsWith(prefix))
                out << line;
    return out;
}

// A module problem (docs/formats.md) over the fake worker's x, with a module of `bytes` zeros (a
// sparse file: the fake worker never reads it).
void writeModuleProblem(const QString &dir, qint64 bytes)
{
    QFile toml(dir + "/m.toml");
    QVERIFY(toml.open(QIODevice::WriteOnly));
    toml.write("name = \"suite_module\"\n[[inputs]]\nname = \"x\"\nshape = [8, 1024]\n"
               "[[outputs]]\nname = \"out\"\nshape = [8, 1024]\n[reference]\nmodule = \"m.pt\"\ntorch = \"2.11.0\"\n");
    QFile pt(dir + "/m.pt");
    QVERIFY(pt.open(QIODevice::WriteOnly));
    QVERIFY(pt.resize(bytes));
}

} // namespace

class TestSuiteCli : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        if (cli().isEmpty())
            QSKIP("KERNELFORGE_CLI is not set (run through ctest)");
    }

    void wholeRun()
    {
        QTemporaryDir out;
        const Run r = suite({dataDir(), "--out", out.path(), "--worker", KF_FAKE_WORKER, "--gpus", "0,1",
                             "--budget-per-problem", "3", "--torch-compile", "off"});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        const SuiteState s = stateIn(out.path());
        QCOMPARE(s.problems.size(), std::size_t(4));
        for (const char *f : {"a_softmax.toml", "b_softmax.toml"}) {
            const SuiteEntry *e = entry(s, f);
            QVERIFY(e);
            QCOMPARE(e->status, std::string(suite_status::Done));
            QCOMPARE(e->bestMs, 0.5);
            QCOMPARE(e->eagerMs, 2.0);
            QCOMPARE(e->policy, std::string("strict"));
            QVERIFY(e->candidates > 0);
            QVERIFY(QFile::exists(QDir(out.path()).filePath(QString::fromStdString(e->session))));
        }
        // Both GPUs were used, one problem each at a time.
        QVERIFY(entry(s, "a_softmax.toml")->gpu != entry(s, "b_softmax.toml")->gpu);
        // The generator names what stops it; a broken file names its line.
        QCOMPARE(entry(s, "c_other_names.toml")->status, std::string(suite_status::Failed));
        QVERIFY(QString::fromStdString(entry(s, "c_other_names.toml")->reason).contains("built-in generator"));
        QVERIFY(QString::fromStdString(entry(s, "d_broken.toml")->reason).contains("d_broken.toml:6: inputs[0].shape"));

        QFile md(QDir(out.path()).filePath("report.md"));
        QVERIFY(md.open(QIODevice::ReadOnly));
        const QString report = md.readAll();
        QVERIFY2(report.contains("| eager PyTorch | 4 | 50.0 % (2) | 50.0 % (2) | 50.0 % (2) | 4.00x over 2 |"),
                 qPrintable(report));
        QVERIFY(QFile::exists(QDir(out.path()).filePath("report.json")));
        QVERIFY(r.out.contains("fast_0 50.0 %"));

        // The same command again finds nothing left to do.
        const Run again = suite({dataDir(), "--out", out.path(), "--worker", KF_FAKE_WORKER, "--torch-compile", "off"});
        QCOMPARE(again.code, 0);
        QVERIFY2(again.out.contains("every problem is done already"), qPrintable(again.out));
    }

    void interruptedAndResumed()
    {
        QTemporaryDir folder, out;
        copyProblem("a_softmax.toml", folder.path(), "p1.toml");
        copyProblem("b_softmax.toml", folder.path(), "p2.toml");
        copyProblem("a_softmax.toml", folder.path(), "p3.toml");
        const QString worker = QStringLiteral(KF_FAKE_WORKER) + " --time-ms 100";
        const QStringList args{folder.path(),          "--out", out.path(), "--worker", worker, "--gpus", "0",
                               "--budget-per-problem", "4"};
        const QString compileLog = out.filePath("compile.log");
        const QStringList env = fakePython(compileLog);

        QProcess p;
        QProcessEnvironment pe = QProcessEnvironment::systemEnvironment();
        for (const QString &kv : env)
            pe.insert(kv.section('=', 0, 0), kv.section('=', 1));
        p.setProcessEnvironment(pe);
        p.start(cli(), QStringList{"suite"} + args);
        QVERIFY(p.waitForStarted());
        // Stop it while the second problem is being searched.
        QElapsedTimer clock;
        clock.start();
        bool second = false;
        while (!second && clock.elapsed() < 60000) {
            QThread::msleep(100);
            const SuiteState s = stateIn(out.path());
            const SuiteEntry *e = entry(s, "p2.toml");
            second = e && e->status == suite_status::Running;
        }
        QVERIFY2(second, "the second problem never started");
        QThread::msleep(1500);
        p.terminate(); // SIGTERM, as Ctrl-C: the searches stop and keep their sessions
        QVERIFY(p.waitForFinished(30000));
        QCOMPARE(p.exitCode(), 130);
        QVERIFY(QString(p.readAllStandardOutput()).contains("run the same command again to resume"));

        SuiteState s = stateIn(out.path());
        QCOMPARE(entry(s, "p1.toml")->status, std::string(suite_status::Done));
        QCOMPARE(entry(s, "p2.toml")->status, std::string(suite_status::Running));
        QCOMPARE(entry(s, "p3.toml")->status, std::string(suite_status::Pending));
        const double spent = entry(s, "p2.toml")->seconds;
        QVERIFY(spent > 0.5 && spent < 4);
        const QString p1Session = QDir(out.path()).filePath(QString::fromStdString(entry(s, "p1.toml")->session));
        const QString p2Session = QDir(out.path()).filePath(QString::fromStdString(entry(s, "p2.toml")->session));
        const int p1Rounds = roundsIn(p1Session), p2Rounds = roundsIn(p2Session);
        QVERIFY(p1Rounds > 0);
        QVERIFY(p2Rounds >= 1);

        const Run r = suite(args, 120000, env);
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        // The finished problem is not searched again; the interrupted one goes on in its own
        // session with what is left of its budget, its torch.compile time kept; the last one runs.
        const QStringList asked = linesOf(compileLog, "problem ");
        QCOMPARE(asked.size(), 3);
        for (const char *f : {"p1.toml", "p2.toml", "p3.toml"})
            QCOMPARE(asked.filter(QString("/") + f).size(), 1);
        s = stateIn(out.path());
        for (const char *f : {"p1.toml", "p2.toml", "p3.toml"})
            QCOMPARE(entry(s, f)->status, std::string(suite_status::Done));
        QCOMPARE(roundsIn(p1Session), p1Rounds);
        QVERIFY(roundsIn(p2Session) > p2Rounds);
        QVERIFY(r.out.contains(
            QString("suite_b_softmax on Fake GPU [0] with the builtin generator, from round %1").arg(p2Rounds + 1)));
        const double total = entry(s, "p2.toml")->seconds;
        QVERIFY2(total > spent && total < 4 + 2, qPrintable(QString::number(total)));
        QCOMPARE(entry(s, "p2.toml")->bestMs, 0.5);
        QCOMPARE(entry(s, "p2.toml")->compileMs, 1.5);
    }

    // What a problem costs beyond its budget, with the costs of the real thing simulated: a worker
    // takes 2 s to start and 0.5 s to load a problem, Python with PyTorch 3 s to start and 2 s to
    // time torch.compile. Each GPU starts one Python for all its problems and keeps its workers,
    // which start again (after a search that ended by killing them) while torch.compile is timed.
    void overheadPerProblem()
    {
        QTemporaryDir folder, out;
        const int problems = 4;
        for (int i = 1; i <= problems; ++i)
            copyProblem(i % 2 ? "a_softmax.toml" : "b_softmax.toml", folder.path(), QString("p%1.toml").arg(i));
        const QString workerLog = out.filePath("worker.log"), compileLog = out.filePath("compile.log");
        // Timing a kernel takes 200 ms, so that every search is still going when its budget ends.
        const QString worker =
            QStringLiteral(KF_FAKE_WORKER) + " --start-ms 2000 --load-ms 500 --time-ms 200 --log " + workerLog;
        const double budget = 2;
        QElapsedTimer clock;
        clock.start();
        const Run r = suite({folder.path(), "--out", out.path(), "--worker", worker, "--compiler", KF_FAKE_WORKER,
                             "--gpus", "0", "--budget-per-problem", QString::number(budget)},
                            300000, fakePython(compileLog, 3000, 2000));
        const double wall = clock.elapsed() / 1000.0;
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        const SuiteState s = stateIn(out.path());
        double searched = 0;
        for (const SuiteEntry &e : s.problems) {
            QCOMPARE(e.status, std::string(suite_status::Done));
            QCOMPARE(e.compileMs, 1.5);
            QVERIFY2(QString::fromStdString(e.reason).contains("time budget"), e.reason.c_str());
            searched += e.seconds;
        }
        QCOMPARE(linesOf(compileLog, "start ").size(), 1);
        QCOMPARE(linesOf(compileLog, "problem ").size(), problems);
        const double overhead = (wall - problems * budget) / problems;
        double recorded = 0;
        for (const SuiteEntry &e : s.problems)
            recorded += e.overheadSeconds / problems;
        qInfo("%d problems of %.0f s in %.1f s (%.1f s in Search::run): %.1f s a problem beyond its budget "
              "(%.1f s as the suite records it), %d worker starts",
              problems, budget, wall, searched, overhead, recorded, int(linesOf(workerLog, "start ").size()));
        // A Python and a worker pool for each problem made it 3 + 2 + 2 + 0.5 = 7.5 s and more.
        QVERIFY2(overhead < 5, qPrintable(QString::number(overhead)));
        // What the suite records is what the clock says, but for the process's start and end.
        QVERIFY2(recorded > 0 && recorded <= overhead + 0.1 && recorded > overhead - 1.5,
                 qPrintable(QString::number(recorded)));
        QVERIFY2(r.out.contains("beyond its search budget a problem took"), qPrintable(r.out));
    }

    // A worker that searched a problem still holds its inputs (on a GPU, as many input sets as
    // fit), so it ends before the next problem's torch.compile is timed: torch.compile ran out of
    // memory beside one on a 4 GB input. The searches here end by running out of ideas, with the
    // workers warm; one log shows the workers' and Python's lines in the order they came.
    void workersEndBeforeTorchCompile()
    {
        QTemporaryDir folder, out;
        copyProblem("a_softmax.toml", folder.path(), "p1.toml");
        copyProblem("b_softmax.toml", folder.path(), "p2.toml");
        const QString log = out.filePath("order.log");
        const Run r =
            suite({folder.path(), "--out", out.path(), "--worker", QStringLiteral(KF_FAKE_WORKER) + " --log " + log,
                   "--compiler", KF_FAKE_WORKER, "--gpus", "0", "--budget-per-problem", "60"},
                  120000, fakePython(log));
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        const QStringList lines = linesOf(log, "");
        // The first line that matches `pattern` whole.
        const auto at = [&](const QString &pattern) { return int(lines.indexOf(QRegularExpression(pattern))); };
        const int second = at("problem .*p2\\.toml");
        QVERIFY2(second > 0, qPrintable(lines.join('\n')));
        const int loaded = at("load .*");
        QVERIFY2(loaded >= 0 && loaded < second, qPrintable(lines.join('\n')));
        const QString first = lines[loaded].section(' ', 1, 1); // the worker that searched p1
        const int quit = at("quit " + first);
        QVERIFY2(quit >= 0 && quit < second, qPrintable(lines.join('\n')));
    }

    // A module problem whose text (its module in base64) is larger than a session should copy: the
    // session keeps the file's text, and the problem is searched from its file.
    void largeModuleSession()
    {
        QTemporaryDir folder, out;
        writeModuleProblem(folder.path(), qint64(kSessionTextLimit)); // its base64 is a third larger
        // The budget counts the setup, and loading an 85 MB problem text takes seconds on a busy
        // machine (18 s of a 20 s budget on two cores shared with a build): 45 s leaves room for a
        // round after it.
        const Run r = suite({folder.path(), "--out", out.path(), "--worker", KF_FAKE_WORKER, "--budget-per-problem",
                             "45", "--torch-compile", "off"});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        const SuiteState state = stateIn(out.path());
        const SuiteEntry *e = entry(state, "m.toml");
        QVERIFY(e);
        QVERIFY2(e->status == suite_status::Done && e->bestMs == 0.5, qPrintable(r.out + r.err));
        auto store =
            SessionStore::open(QDir(out.path()).filePath(QString::fromStdString(e->session)).toStdString(), true);
        QVERIFY(store);
        auto meta = store->sessionMeta();
        QVERIFY(meta);
        QVERIFY(meta->problemText.find("module = \"m.pt\"") != std::string::npos);
        QVERIFY(meta->problemText.find("[module_data]") == std::string::npos);
        QVERIFY(QFileInfo(QDir(out.path()).filePath(QString::fromStdString(e->session))).size() < (1 << 20));
    }

    void sessionProblemTextKeepsSmallModules()
    {
        QTemporaryDir folder;
        writeModuleProblem(folder.path(), 3000);
        auto p = loadProblemFile(folder.filePath("m.toml").toStdString());
        QVERIFY2(p, p ? "" : p.error().text().c_str());
        QCOMPARE(sessionProblemText(*p), textWithModule(*p)); // within the limit: the module travels along
        QVERIFY(sessionProblemText(*p).find("[module_data]") != std::string::npos);
        const std::string byName = sessionProblemText(*p, 1000);
        QVERIFY(byName.find("[module_data]") == std::string::npos);
        QVERIFY(byName.find("module = \"m.pt\"") != std::string::npos);
        QVERIFY(parseProblem(byName, "session", "", false));
    }

    void failedProblemsAgain()
    {
        QTemporaryDir folder, out;
        copyProblem("a_softmax.toml", folder.path(), "p1.toml");
        copyProblem("c_other_names.toml", folder.path(), "p2.toml");
        copyProblem("d_broken.toml", folder.path(), "p3.toml");
        const QStringList args{folder.path(),          "--out", out.path(),        "--worker", KF_FAKE_WORKER,
                               "--budget-per-problem", "2",     "--torch-compile", "off"};
        QCOMPARE(suite(args).code, 0);
        QCOMPARE(entry(stateIn(out.path()), "p2.toml")->status, std::string(suite_status::Failed));
        QCOMPARE(entry(stateIn(out.path()), "p3.toml")->status, std::string(suite_status::Failed));

        // A failed search is tried again only when asked; a file that parses now joins by itself.
        QVERIFY(QFile::remove(folder.path() + "/p3.toml"));
        copyProblem("b_softmax.toml", folder.path(), "p3.toml");
        const Run again = suite(args);
        QCOMPARE(again.code, 0);
        QVERIFY2(!again.out.contains("suite_c_other_names"), qPrintable(again.out));
        SuiteState s = stateIn(out.path());
        QCOMPARE(entry(s, "p3.toml")->status, std::string(suite_status::Done));
        QCOMPARE(entry(s, "p3.toml")->bestMs, 0.5);

        const Run retried = suite(args + QStringList{"--retry-failed"});
        QCOMPARE(retried.code, 0);
        QVERIFY2(retried.out.contains("suite_c_other_names: failed"), qPrintable(retried.out));
        QVERIFY(!retried.out.contains("suite_a_softmax"));
    }

    void usageErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("no folder") << QStringList{} << "FOLDER";
        QTest::newRow("--budget") << QStringList{dataDir(), "--budget", "5"} << "--budget-per-problem";
        QTest::newRow("zero budget") << QStringList{dataDir(), "--budget-per-problem", "0"} << "more than 0";
        QTest::newRow("torch-compile") << QStringList{dataDir(), "--torch-compile", "maybe"} << "auto or off";
        QTest::newRow("generator") << QStringList{dataDir(), "--generator", "oracle", "--torch-compile", "off"}
                                   << "oracle";
        QTest::newRow("not a folder") << QStringList{"/nonexistent", "--torch-compile", "off"} << "/nonexistent";
    }

    void usageErrors()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        QTemporaryDir out;
        const Run r = suite(args + QStringList{"--out", out.path()});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
    }

    void noGpuFailsFast()
    {
        if (qEnvironmentVariableIsEmpty("KERNELFORGE_WORKER"))
            QSKIP("KERNELFORGE_WORKER is not set (the worker is not built)");
        QTemporaryDir folder, out;
        copyProblem("a_softmax.toml", folder.path(), "p1.toml");
        copyProblem("b_softmax.toml", folder.path(), "p2.toml");
        QProcess probe;
        probe.start(cli(), {"baseline", "softmax", "--variant", "small"});
        probe.waitForFinished(120000);
        if (probe.exitCode() != 3)
            QSKIP("this machine has a GPU");
        const Run r = suite({folder.path(), "--out", out.path(), "--torch-compile", "off"});
        QCOMPARE(r.code, 3);
        QVERIFY2(r.err.contains("needs an NVIDIA GPU") && r.err.contains("--compile-only"), qPrintable(r.err));
        const SuiteState s = stateIn(out.path());
        QCOMPARE(entry(s, "p1.toml")->status, std::string(suite_status::Pending));
        QCOMPARE(entry(s, "p2.toml")->status, std::string(suite_status::Pending));
    }

    void compileOnlyWithoutGpu()
    {
        if (qEnvironmentVariableIsEmpty("KERNELFORGE_WORKER"))
            QSKIP("KERNELFORGE_WORKER is not set (the worker is not built)");
        QTemporaryDir folder, out;
        copyProblem("a_softmax.toml", folder.path(), "p1.toml");
        const Run r = suite({folder.path(), "--out", out.path(), "--compile-only", "--rounds", "1", "--ideas", "1",
                             "--impls", "1", "--compilers", "1"},
                            300000);
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        const SuiteState s = stateIn(out.path());
        QCOMPARE(entry(s, "p1.toml")->status, std::string(suite_status::Done));
        QVERIFY2(QString::fromStdString(entry(s, "p1.toml")->reason).startsWith("compile only: 1 candidates"),
                 entry(s, "p1.toml")->reason.c_str());
        QFile md(QDir(out.path()).filePath("report.md"));
        QVERIFY(md.open(QIODevice::ReadOnly));
        QVERIFY(QString(md.readAll()).contains("| suite_a_softmax | compiled only |"));
    }
};

QTEST_GUILESS_MAIN(TestSuiteCli)
#include "test_suite_cli.moc"
