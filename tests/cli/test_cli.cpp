// kernelforge-cli as a user runs it: listings, errors with exit codes, export that nvcc builds.
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

class TestCli : public QObject {
    Q_OBJECT

    struct Run {
        int code = -1;
        QString out, err;
    };
    static Run cli(const QStringList &args)
    {
        QProcess p;
        p.start(qEnvironmentVariable("KERNELFORGE_CLI"), args);
        p.waitForFinished(300000);
        return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
                p.readAllStandardError()};
    }

private slots:
    void initTestCase()
    {
        if (qEnvironmentVariableIsEmpty("KERNELFORGE_CLI"))
            QSKIP("KERNELFORGE_CLI is not set (run through ctest)");
    }

    void listsProblems()
    {
        const Run r = cli({"problems"});
        QCOMPARE(r.code, 0);
        for (const char *name : {"matmul", "conv2d", "conv2d_relu_maxpool", "softmax", "layernorm"})
            QVERIFY2(r.out.contains(name), name);
    }

    void showsAProblem()
    {
        const Run r = cli({"show", "softmax"});
        QCOMPARE(r.code, 0);
        QVERIFY(r.out.contains("torch.softmax"));
        QVERIFY(r.out.contains("[4096,65536]"));
    }

    void errors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("message");
        QTest::newRow("no command") << QStringList{} << 2 << "usage";
        QTest::newRow("unknown command") << QStringList{"frobnicate"} << 2 << "unknown command";
        QTest::newRow("unknown problem") << QStringList{"show", "no_such_problem"} << 2 << "no_such_problem";
        QTest::newRow("missing candidate")
            << QStringList{"eval", "softmax", "/nonexistent.cu"} << 2 << "/nonexistent.cu";
        QTest::newRow("bad directive line")
            << QStringList{"eval", "softmax", KF_SOURCE_DIR "/tests/cli/bad_directive.cu"} << 2 << "bad_directive.cu:3";
        QTest::newRow("bad policy") << QStringList{"eval", "softmax", KF_SOURCE_DIR "/tests/kernels/naive/softmax.cu",
                                                   "--policy", "lax"}
                                    << 2 << "strict or loose";
        QTest::newRow("bad trials") << QStringList{"eval", "softmax", "x.cu", "--trials", "zero"} << 2 << "--trials";
        QTest::newRow("bad seed") << QStringList{"eval", "softmax", KF_SOURCE_DIR "/tests/kernels/naive/softmax.cu",
                                                 "--seed", "abc"}
                                  << 2 << "--seed takes a positive integer";
        QTest::newRow("replay of a node that is not a candidate")
            << QStringList{"eval", KF_SOURCE_DIR "/resources/examples/softmax.kfsession", "1"} << 2
            << "is not a candidate";
        QTest::newRow("replay of a missing node")
            << QStringList{"eval", KF_SOURCE_DIR "/resources/examples/softmax.kfsession", "99999"} << 2
            << "has no node 99999";
    }
    void errors()
    {
        QFETCH(QStringList, args);
        QFETCH(int, code);
        QFETCH(QString, message);
        const Run r = cli(args);
        QCOMPARE(r.code, code);
        QVERIFY2((r.err + r.out).contains(message), qPrintable(r.err));
    }

    // A session's candidate is evaluated again from the session itself (its problem, its source,
    // its recorded seed); without a GPU that is a compile check and a plain "needs a GPU".
    void replayWithoutGpu()
    {
        const Run r = cli({"eval", KF_SOURCE_DIR "/resources/examples/softmax.kfsession", "16"});
        if (r.code != 3)
            QSKIP("this machine has a GPU");
        QVERIFY2(r.out.contains("compiles for sm_90a"), qPrintable(r.out + r.err));
        QVERIFY(r.err.contains("needs an NVIDIA GPU"));
    }

    // Without a GPU, eval still compile-checks the candidate and says plainly what it needs.
    void evalWithoutGpu()
    {
        const Run r = cli({"eval", "softmax", KF_SOURCE_DIR "/tests/kernels/naive/softmax.cu"});
        if (r.code != 3)
            QSKIP("this machine has a GPU");
        QVERIFY(r.out.contains("compiles for sm_90a"));
        QVERIFY(r.err.contains("needs an NVIDIA GPU"));
    }

    // The sessions recorded on a GPU and shipped read-only open anywhere, with their trajectory.
    void shippedExampleSessions_data()
    {
        QTest::addColumn<QString>("path");
        const QDir dir(QStringLiteral(KF_SOURCE_DIR "/resources/examples"));
        for (const QString &f : dir.entryList({"*.kfsession"}, QDir::Files))
            QTest::newRow(qPrintable(f)) << dir.filePath(f);
    }
    void shippedExampleSessions()
    {
        QFETCH(QString, path);
        const Run r = cli({"report", path});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY(r.out.contains("round"));
        // Recorded on a Hopper GPU (the H200 or the H100 the benchmark pages name).
        QVERIFY2(r.out.contains(" on NVIDIA H200") || r.out.contains(" on NVIDIA H100"), qPrintable(r.out.left(200)));
        QVERIFY2(!QFile::exists(path + "-wal"), "a read-only session leaves no write-ahead log behind");
    }

    void exportBuildsWithNvcc()
    {
        QTemporaryDir dir;
        const QString cu = dir.filePath("softmax_export.cu");
        const Run r =
            cli({"export", "softmax", KF_SOURCE_DIR "/tests/kernels/naive/softmax.cu", "-o", cu, "--speedup", "1.5"});
        QCOMPARE(r.code, 0);
        QProcess nvcc;
        nvcc.setProcessChannelMode(QProcess::MergedChannels);
        nvcc.start(KF_NVCC, {"-gencode=arch=compute_90a,code=sm_90a", "-c", cu, "-o", dir.filePath("x.o")});
        if (!nvcc.waitForStarted())
            QSKIP("nvcc is not installed");
        nvcc.waitForFinished(180000);
        QVERIFY2(nvcc.exitCode() == 0, nvcc.readAll().constData());
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
