// On a GPU: every kernel under tests/kernels gets the verdict its `// @expect` line names, with a
// reason, and the worker is usable again after each one (crashes and hangs included).
#include "support.h"

#include "eval/worker_pool.h"

#include <QDirIterator>
#include <QTest>

#include <map>
#include <memory>

using namespace kf;

class TestKernelsGpu : public QObject {
    Q_OBJECT
    std::map<std::string, std::unique_ptr<WorkerClient>> m_workers; // one per problem, loaded once

    WorkerClient *workerFor(const std::string &problem)
    {
        auto &w = m_workers[problem];
        if (!w) {
            w = std::make_unique<WorkerClient>(test::workerConfig());
            if (!w->start() || !w->load(test::seedProblem(problem)))
                return nullptr;
            if (auto b = w->baseline(20))
                w->setBaselineMs(b->timing.medianMs);
        }
        return w.get();
    }

private slots:
    void initTestCase()
    {
        std::string reason;
        if (!test::workerHasGpu(&reason))
            QSKIP(qPrintable(QString::fromStdString("needs an NVIDIA GPU: " + reason)));
    }

    void kernels_data()
    {
        QTest::addColumn<QString>("path");
        QDirIterator it(QStringLiteral(KF_SOURCE_DIR "/tests/kernels"), {"*.cu"}, QDir::Files, QDirIterator::Subdirectories);
        QStringList all;
        while (it.hasNext()) all << it.next();
        all.sort();
        for (const QString &p : all)
            QTest::newRow(qPrintable(QDir(KF_SOURCE_DIR "/tests/kernels").relativeFilePath(p))) << p;
    }

    void kernels()
    {
        QFETCH(QString, path);
        const std::string src = test::readText(path);
        const std::string expect = test::expectation(src, "expect");
        const std::string problem = test::expectation(src, "problem");
        QVERIFY2(!expect.empty() && !problem.empty(), "the kernel names its problem and expected verdict");
        WorkerClient *w = workerFor(problem);
        QVERIFY2(w, "the worker loads the problem");
        auto r = w->evaluate("k", src, "", Policy::Strict, 5, 20);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().text().c_str());
        w->checkFloor(*r);
        qInfo("%s: %s — %s", qPrintable(path.section('/', -2)), toString(r->verdict).c_str(), r->reason.c_str());
        QCOMPARE(QString::fromStdString(toString(r->verdict)), QString::fromStdString(expect));
        if (r->verdict != Verdict::Correct)
            QVERIFY2(!r->reason.empty(), "every verdict but correct comes with a reason");
        else
            QVERIFY(r->timing && r->timing->medianMs > 0);
        // The worker (restarted where it died) answers again, with the problem still loaded.
        auto again = w->evaluate("probe", test::readText(KF_SOURCE_DIR "/tests/kernels/naive/" +
                                                         QString::fromStdString(problem) + ".cu"),
                                 "", Policy::Strict, 1, 3);
        QVERIFY2(again.ok() && again->verdict == Verdict::Correct, "the worker recovers");
    }

    // Two workers on one GPU: verification in parallel, timing one at a time, every verdict right.
    void poolOfTwo()
    {
        // The per-problem workers of kernels() keep their inputs and PyTorch's cached blocks
        // (tens of GB at the seed sizes): an 80 GB card needs them gone before two more start.
        m_workers.clear();
        PoolConfig c;
        c.worker = test::workerConfig();
        c.workersPerGpu = 2;
        WorkerPool pool(c);
        QVERIFY(pool.start().ok());
        QVERIFY(pool.load(test::seedProblem("softmax")).ok());
        QVERIFY(pool.baseline(10).ok());
        const QString dir = QStringLiteral(KF_SOURCE_DIR "/tests/kernels/");
        const QStringList files{"naive/softmax.cu", "adversarial/partial_write.cu", "adversarial/softmax_zeros.cu",
                                "adversarial/out_of_bounds.cu", "naive/softmax.cu"};
        std::vector<EvalRequest> reqs;
        for (int i = 0; i < files.size(); ++i) {
            EvalRequest r;
            r.key = "c" + std::to_string(i);
            r.source = test::readText(dir + files[i]);
            r.timingTrials = 10;
            reqs.push_back(r);
        }
        const auto results = pool.evaluate(reqs);
        QCOMPARE(results.size(), reqs.size());
        for (std::size_t i = 0; i < results.size(); ++i) {
            const std::string want = test::expectation(reqs[i].source, "expect");
            qInfo("pool %s: %s — %s", qPrintable(files[int(i)]), toString(results[i].verdict).c_str(), results[i].reason.c_str());
            QCOMPARE(QString::fromStdString(toString(results[i].verdict)), QString::fromStdString(want));
        }
    }

    // Stream order: the candidate runs right after libtorch generated a 1 GiB input on stream 0
    // and must see its final values (a copy kernel is checked element by element).
    void streamOrder()
    {
        auto p = loadProblemFile(KF_SOURCE_DIR "/tests/data/stream_order.toml");
        QVERIFY2(p.ok(), p.ok() ? "" : p.error().text().c_str());
        WorkerClient w(test::workerConfig());
        QVERIFY(w.start().ok());
        QVERIFY(w.load(*p).ok());
        auto r = w.evaluate("copy", test::readText(KF_SOURCE_DIR "/tests/data/stream_order_copy.cu"), "",
                            Policy::Strict, 3, 5);
        QVERIFY(r.ok());
        QCOMPARE(QString::fromStdString(toString(r->verdict)), QStringLiteral("correct"));
    }
};

QTEST_GUILESS_MAIN(TestKernelsGpu)
#include "test_kernels_gpu.moc"
