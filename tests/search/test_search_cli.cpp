// kernelforge-cli report on a session recorded by a search against the fake worker, and the
// search command's argument errors.
#include "search/trajectory.h"
#include "search_fixture.h"

#include <QProcess>
#include <QtTest>

using namespace kf;
using namespace kf::test;

class TestSearchCli : public QObject {
    Q_OBJECT

    struct Run {
        int code = -1;
        QString out, err;
    };
    static Run cli(const QStringList &args)
    {
        QProcess p;
        p.start(qEnvironmentVariable("KERNELFORGE_CLI"), args);
        p.waitForFinished(60000);
        return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
                p.readAllStandardError()};
    }

    Fixture m_f;
    QString m_session;
    std::int64_t m_demoted = 0;

private slots:
    void initTestCase()
    {
        if (qEnvironmentVariableIsEmpty("KERNELFORGE_CLI"))
            QSKIP("KERNELFORGE_CLI is not set (run through ctest)");
        QVERIFY(m_f.store);
        auto gen = std::make_shared<ScriptedGenerator>(std::vector<ScriptedIdea>{
            {"naive", "Naive, one thread per row", {fakeKernel(4.0)}, false, {}},
            {"ldg", "Read-only loads, with \"quotes\", and commas", {fakeKernel(1.6), fakeKernel(3.0)}, true, {}},
            // The fastest of all, but the sanitizer gate finds an out-of-bounds write: it never counts.
            {"slower", "Something slower", {fakeKernel(5.0), fakeKernel(0.5, "FAKE_OOB")}, true, {}},
        });
        SearchSettings settings = quickSettings(3, 1, 2);
        settings.repairs = 0;
        auto search = m_f.search(gen, settings);
        std::atomic<bool> cancel{false};
        QVERIFY(search->run(cancel).ok());
        for (const auto &n : m_f.nodes(NodeKind::Candidate))
            if (n.status == "sanitizer")
                m_demoted = n.id;
        QVERIFY(m_demoted != 0);
        search.reset();
        QVERIFY(m_f.store->close().ok());
        m_session = QString::fromStdString(m_f.path());
    }

    void reportTable()
    {
        const Run r = cli({"report", m_session});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("% of reference"), qPrintable(r.out));
        QVERIFY(r.out.contains("softmax"));
        QVERIFY(r.out.contains("eager PyTorch 2.0000 ms"));
        QVERIFY(r.out.contains("50.0 %"));  // round 1: 2.0 / 4.0
        QVERIFY(r.out.contains("125.0 %")); // round 2: 2.0 / 1.6
        QVERIFY(r.out.contains("Read-only loads"));
        // The last run's account follows the table.
        QVERIFY2(r.out.contains("last run: no time budget, ran ") && r.out.contains(", gate ") &&
                     r.out.contains("passed compute-sanitizer"),
                 qPrintable(r.out));
    }

    void reportCsv()
    {
        const Run r = cli({"report", m_session, "--csv"});
        QCOMPARE(r.code, 0);
        const QStringList lines = r.out.split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 4);
        QVERIFY(lines[0].startsWith("round,best_ms,percent_of_reference,speedup,best_node,idea"));
        QVERIFY2(lines[1].startsWith("1,4,50.00,0.5000,"), qPrintable(lines[1]));
        QVERIFY2(lines[2].contains(R"("Read-only loads, with ""quotes"", and commas")"), qPrintable(lines[2]));
        QVERIFY(lines[3].startsWith("3,1.6,125.00,1.2500,"));

        QTemporaryDir dir;
        const QString out = dir.filePath("t.csv");
        QCOMPARE(cli({"report", m_session, "--csv", "-o", out}).code, 0);
        QFile f(out);
        QVERIFY(f.open(QIODevice::ReadOnly));
        QCOMPARE(QString(f.readAll()), r.out);
    }

    void showCandidate()
    {
        const Run r = cli({"show", m_session, QString::number(m_demoted)});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains("verdict     sanitizer: passed verification, but compute-sanitizer memcheck"),
                 qPrintable(r.out));
        QVERIFY(r.out.contains("sanitizer   finding (memcheck;"));
        QVERIFY(r.out.contains("compute-sanitizer's report:"));
        QVERIFY(r.out.contains("Invalid __global__ write of size 4 bytes"));
        QVERIFY(r.out.contains("ERROR SUMMARY: 1 error"));
        QVERIFY(r.out.contains("median 0.5000 ms")); // measured before the gate, kept for the record

        const Run table = cli({"report", m_session});
        QVERIFY2(table.out.contains("compute-sanitizer:") && table.out.contains("1 demoted"), qPrintable(table.out));

        const Run missing = cli({"show", m_session, "9999"});
        QCOMPARE(missing.code, 2);
        QVERIFY(missing.err.contains("no node 9999"));
        const Run notANumber = cli({"show", m_session, "first"});
        QCOMPARE(notANumber.code, 2);
        QVERIFY(notANumber.err.contains("'first'"));
    }

    void reportErrors()
    {
        QCOMPARE(cli({"report"}).code, 2);
        const Run missing = cli({"report", "/nonexistent.kfsession"});
        QCOMPARE(missing.code, 2);
        QVERIFY(missing.err.contains("/nonexistent.kfsession"));
    }

    void searchErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTemporaryDir dir;
        QTest::newRow("no session") << QStringList{"search", "softmax"} << "--session";
        QTest::newRow("no problem") << QStringList{"search", "--session", "x.kfsession"} << "problem";
        QTest::newRow("bad rounds") << QStringList{"search", "softmax", "--session", "x.kfsession", "--rounds", "many"}
                                    << "--rounds";
        QTest::newRow("zero ideas") << QStringList{"search", "softmax", "--session", "x.kfsession", "--ideas", "0"}
                                    << "ideas_per_round";
        QTest::newRow("bad budget") << QStringList{"search", "softmax", "--session", "x.kfsession", "--budget", "-1"}
                                    << "--budget";
        QTest::newRow("bad policy") << QStringList{"search", "softmax", "--session", "x.kfsession", "--policy", "lax"}
                                    << "strict or loose";
        QTest::newRow("sanitize both ways")
            << QStringList{"search", "softmax", "--session", "x.kfsession", "--sanitize", "--no-sanitize"}
            << "contradict";
        QTest::newRow("unknown generator")
            << QStringList{"search", "softmax", "--session", "x.kfsession", "--generator", "oracle"} << "oracle";
        QTest::newRow("resume a missing session")
            << QStringList{"search", "--resume", "--session", "/nonexistent.kfsession"} << "/nonexistent.kfsession";
    }

    void searchErrors()
    {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const Run r = cli(args);
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
    }

    void searchRefusesAnotherProblemsSession()
    {
        const Run r = cli({"search", "matmul", "--resume", "--session", m_session});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains("softmax"), qPrintable(r.err));
    }

    // A search's last line is its budget split and the best's gate (the built-in generator on the
    // fake worker, with the stand-in compute-sanitizer).
    void searchEndsWithItsBudget()
    {
        QTemporaryDir dir;
        const QString session = dir.filePath("budget.kfsession");
        qputenv("KF_SANITIZER", KF_FAKE_SANITIZER);
        qputenv("KERNELFORGE_TEMPLATES", KF_SOURCE_DIR "/resources/templates");
        const QString worker = QStringLiteral(KF_FAKE_WORKER " --time-ms 2");
        const Run r = cli({"search", "softmax", "--variant", "small", "--session", session, "--budget", "20",
                           "--rounds", "2", "--worker", worker, "--compiler", QStringLiteral(KF_FAKE_WORKER)});
        qunsetenv("KF_SANITIZER");
        if (r.code == 2 && r.err.contains("not available"))
            QSKIP("the built-in generator is not in this build");
        QVERIFY2(r.code == 0, qPrintable(r.err));
        const QStringList lines = r.out.split('\n', Qt::SkipEmptyParts);
        QVERIFY(!lines.isEmpty());
        const QString last = lines.last();
        QVERIFY2(last.startsWith("budget 20.0 s, used ") && last.contains(": setup ") && last.contains(", gate ") &&
                     last.contains(", idle ") && last.contains("; best #"),
                 qPrintable(r.out));
        QVERIFY2(last.contains("passed compute-sanitizer"), qPrintable(last));
        QVERIFY(!r.out.contains("budget: ")); // the live BudgetStatus lines are for the workbench
    }

    void searchNeverOverwritesASession()
    {
        const Run r = cli({"search", "softmax", "--session", m_session, "--generator", "builtin"});
        QCOMPARE(r.code, 2);
        // Without the built-in generator in the build, that is what it says first.
        QVERIFY2(r.err.contains("--resume") || r.err.contains("not available"), qPrintable(r.err));
    }
};

QTEST_GUILESS_MAIN(TestSearchCli)
#include "test_search_cli.moc"
