// On a GPU: a short search with the built-in generator on small problems. After every round the
// session's best is no slower than before, and every kernel the trajectory reports as a round's
// best is verified again by a fresh worker (strict, five trials): what the search reports holds up.
// Without a GPU it skips with the reason the worker gives.
#include "eval/compile_pool.h"
#include "eval/worker_pool.h"
#include "gen/builtin/builtin_generator.h"
#include "problem/problem.h"
#include "search/search.h"
#include "search/trajectory.h"
#include "store/session_store.h"

#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <cstdlib>
#include <set>

using namespace kf;

class TestSearchGpu : public QObject {
    Q_OBJECT

    static std::vector<std::string> workerArgv() { return {std::getenv("KERNELFORGE_WORKER")}; }

private slots:
    void initTestCase()
    {
        const char *w = std::getenv("KERNELFORGE_WORKER");
        if (!w || !*w)
            QSKIP("KERNELFORGE_WORKER is not set (run through ctest)");
        qputenv("KERNELFORGE_TEMPLATES", QByteArrayLiteral(KF_SOURCE_DIR "/resources/templates"));
        WorkerClient probe(WorkerConfig{workerArgv()});
        if (Status s = probe.start(); !s)
            QSKIP(qPrintable(QString::fromStdString("the worker does not start: " + s.error().text())));
        if (!probe.info() || !probe.info()->gpu.present)
            QSKIP(qPrintable(QString::fromStdString("needs an NVIDIA GPU: " +
                                                    (probe.info() ? probe.info()->gpu.reason : std::string()))));
    }

    void roundBestHoldsUp_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("variant");
        QTest::newRow("softmax small") << "seed/softmax.toml" << "small";
        QTest::newRow("layernorm small") << "seed/layernorm.toml" << "small";
        QTest::newRow("matmul small") << "seed/matmul.toml" << "small";
        QTest::newRow("conv2d+relu+maxpool small") << "seed/conv2d_relu_maxpool.toml" << "small";
    }

    void roundBestHoldsUp()
    {
        QFETCH(QString, file);
        QFETCH(QString, variant);
        const QString path = QStringLiteral(KF_SOURCE_DIR "/problems/") + file;
        auto problem = loadProblemFile(path.toStdString(), variant.toStdString());
        QVERIFY2(problem.ok(), problem.ok() ? "" : problem.error().text().c_str());

        QTemporaryDir dir;
        SessionMeta meta;
        meta.problemName = problem->name;
        meta.problemText = problem->text;
        meta.problemVariant = problem->variant;
        meta.writer = "test_search_gpu";
        auto store = SessionStore::create(dir.filePath("s.kfsession").toStdString(), meta);
        QVERIFY2(store.ok(), store.ok() ? "" : store.error().text().c_str());

        PoolConfig pc;
        pc.worker.argv = workerArgv();
        WorkerPool pool(pc);
        CompilePoolConfig cc;
        cc.argv = workerArgv();
        cc.processes = 2;
        CompilePool compiler(cc);
        SearchSettings s;
        s.rounds = 4;
        s.ideasPerRound = 2;
        s.implsPerIdea = 2;
        s.trials = 3;
        s.timingTrials = 20;
        Search search(*problem, builtin::makeBuiltinGenerator(), s, pool, compiler, *store);
        std::atomic<bool> cancel{false};
        Status ran = search.run(cancel);
        QVERIFY2(ran, ran ? "" : ran.error().text().c_str());
        QVERIFY(search.state().bestMs() > 0);

        auto t = readTrajectory(*store);
        QVERIFY2(t.ok(), t.ok() ? "" : t.error().text().c_str());
        QVERIFY(!t->rows.empty());
        double before = 0;
        std::set<std::int64_t> winners;
        for (const TrajectoryRow &r : t->rows) {
            if (r.bestMs <= 0) continue;
            if (before > 0)
                QVERIFY2(r.bestMs <= before, qPrintable(QStringLiteral("round %1: %2 ms after %3 ms").arg(r.round).arg(r.bestMs).arg(before)));
            before = r.bestMs;
            winners.insert(r.bestNode);
        }
        QVERIFY(!winners.empty());

        // Each winner again, on a worker that never saw it.
        WorkerClient fresh(WorkerConfig{workerArgv()});
        QVERIFY(fresh.start().ok());
        QVERIFY(fresh.load(*problem).ok());
        for (std::int64_t node : winners) {
            auto n = store->node(node);
            QVERIFY(n.ok());
            auto r = fresh.verify("winner" + std::to_string(node), n->text, "", Policy::Strict, 5);
            QVERIFY2(r.ok(), r.ok() ? "" : r.error().text().c_str());
            qInfo("%s: winner #%lld (%s) re-verified: %s %s", problem->name.c_str(), (long long)node, n->title.c_str(),
                  toString(r->verdict).c_str(), r->reason.c_str());
            QCOMPARE(QString::fromStdString(toString(r->verdict)), QStringLiteral("correct"));
        }
    }
};

QTEST_GUILESS_MAIN(TestSearchGpu)
#include "test_search_gpu.moc"
