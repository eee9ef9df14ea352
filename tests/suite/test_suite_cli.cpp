// kernelforge-cli suite against the fake worker (which reports a softmax graph over an input x and
// times every kernel at 0.5 ms against an eager 2 ms) with the built-in generator: a whole run with
// failures, a run interrupted and resumed, and, with the real worker on a machine without a GPU,
// the fail-fast error and a compile-only run.
#include "search/trajectory.h"
#include "store/session_store.h"
#include "suite/suite_state.h"

#include <QtCore/QDir>
#include <QtCore/QElapsedTimer>
#include <QtCore/QFile>
#include <QtCore/QProcess>
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

Run suite(const QStringList &args, int timeoutMs = 120000)
{
    QProcess p;
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
        const QStringList args{folder.path(), "--out", out.path(), "--worker", worker, "--gpus", "0",
                               "--budget-per-problem", "4", "--torch-compile", "off"};

        QProcess p;
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

        const Run r = suite(args);
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        // The finished problem is not searched again; the interrupted one goes on in its own
        // session with what is left of its budget; the last one runs.
        s = stateIn(out.path());
        for (const char *f : {"p1.toml", "p2.toml", "p3.toml"})
            QCOMPARE(entry(s, f)->status, std::string(suite_status::Done));
        QCOMPARE(roundsIn(p1Session), p1Rounds);
        QVERIFY(roundsIn(p2Session) > p2Rounds);
        QVERIFY(r.out.contains(QString("suite_b_softmax on Fake GPU [0] with the builtin generator, from round %1")
                                   .arg(p2Rounds + 1)));
        const double total = entry(s, "p2.toml")->seconds;
        QVERIFY2(total > spent && total < 4 + 2, qPrintable(QString::number(total)));
        QCOMPARE(entry(s, "p2.toml")->bestMs, 0.5);
    }

    void failedProblemsAgain()
    {
        QTemporaryDir folder, out;
        copyProblem("a_softmax.toml", folder.path(), "p1.toml");
        copyProblem("c_other_names.toml", folder.path(), "p2.toml");
        copyProblem("d_broken.toml", folder.path(), "p3.toml");
        const QStringList args{folder.path(), "--out", out.path(), "--worker", KF_FAKE_WORKER, "--budget-per-problem",
                               "2", "--torch-compile", "off"};
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
