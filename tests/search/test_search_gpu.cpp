// On a GPU: a short search with the built-in generator on small problems. After every round the
// session's best is no slower than before, and every kernel the trajectory reports as a round's
// best is verified again by a fresh worker (strict, five trials): what the search reports holds up.
// Where compute-sanitizer works, the search's best went through the sanitizer gate, and the gate
// demotes known-faulty kernels that verification passes (tests/data/sanitizer/).
// Without a GPU it skips with the reason the worker gives.
#include "eval/compile_pool.h"
#include "eval/worker_pool.h"
#include "gen/builtin/builtin_generator.h"
#include "problem/problem.h"
#include "search/records.h"
#include "search/search.h"
#include "search/session_setup.h"
#include "search/trajectory.h"
#include "store/session_store.h"

#include "gpu_gate.h"

#include <QTemporaryDir>
#include <QtTest>

#include <QFile>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
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
        KF_REQUIRE_GPU();
    }

    void roundBestHoldsUp_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("variant");
        QTest::newRow("softmax small") << "seed/softmax.toml"
                                       << "small";
        QTest::newRow("layernorm small") << "seed/layernorm.toml"
                                         << "small";
        QTest::newRow("matmul small") << "seed/matmul.toml"
                                      << "small";
        QTest::newRow("conv2d+relu+maxpool small") << "seed/conv2d_relu_maxpool.toml"
                                                   << "small";
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
            if (r.bestMs <= 0)
                continue;
            if (before > 0)
                QVERIFY2(
                    r.bestMs <= before,
                    qPrintable(QStringLiteral("round %1: %2 ms after %3 ms").arg(r.round).arg(r.bestMs).arg(before)));
            before = r.bestMs;
            winners.insert(r.bestNode);
        }
        QVERIFY(!winners.empty());

        // The gate: every winner went through it when the tool works here.
        const SanitizerProbe probe = pool.probeSanitizer(); // known from the search: no new probe
        if (!probe.memcheck)
            qWarning("sanitizer gate off on this machine: %s", probe.reason.c_str());
        else
            qInfo("%s: compute-sanitizer %s: %d kernels run under it in %.1f s, %d demoted, %d not checked",
                  problem->name.c_str(), probe.version.c_str(), t->sanitizer.checked, t->sanitizer.seconds,
                  t->sanitizer.findings, t->sanitizer.unchecked);
        // What the search reports as its best went through it (the round winners before it need not).
        const std::int64_t best = t->rows.back().bestNode;
        auto n = store->node(best);
        QVERIFY(n.ok());
        auto reading = readCandidate(*n);
        QVERIFY(reading);
        QCOMPARE(reading->result.sanitizer.has_value(), probe.memcheck);
        if (reading->result.sanitizer && reading->result.sanitizer->outcome != "clean")
            qWarning("best #%lld: %s: %s", (long long)best, reading->result.sanitizer->outcome.c_str(),
                     reading->result.sanitizer->note.c_str());
        QCOMPARE(search.budget().bestNode, best);
        QCOMPARE(QString::fromStdString(search.budget().bestGate),
                 probe.memcheck ? QStringLiteral("clean") : QStringLiteral("off"));
        qInfo("%s: %s", problem->name.c_str(), describe(search.budget()).c_str());

        // Each winner again, on a worker that never saw it.
        WorkerConfig config;
        config.argv = workerArgv();
        WorkerClient fresh(config);
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

    // The gate's runs on kernels whose fault verification cannot see, and on a clean one.
    // The default settings with a time budget on the real worker and compute-sanitizer: the run
    // ends within its budget plus one evaluation, setup included, and its best passed the gate.
    void aBudgetIsKept()
    {
        auto problem = loadProblemFile(KF_SOURCE_DIR "/problems/seed/softmax.toml", "small");
        QVERIFY(problem.ok());
        QTemporaryDir dir;
        auto store =
            SessionStore::create(dir.filePath("budget.kfsession").toStdString(), sessionMetaFor(*problem, "", ""));
        QVERIFY(store.ok());
        PoolConfig pc;
        pc.worker.argv = workerArgv();
        WorkerPool pool(pc);
        CompilePoolConfig cc;
        cc.argv = workerArgv();
        CompilePool compiler(cc);
        SearchSettings s;
        s.rounds = 100;
        s.timeBudgetSeconds = 40;
        Search search(*problem, builtin::makeBuiltinGenerator(), s, pool, compiler, *store);
        std::atomic<bool> cancel{false};
        const auto started = std::chrono::steady_clock::now();
        Status ran = search.run(cancel);
        const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        QVERIFY2(ran, ran ? "" : ran.error().text().c_str());
        const RunBudget &b = search.budget();
        qInfo("softmax small, budget 40 s: %.1f s of wall time; %s", wall, describe(b).c_str());
        // One evaluation of a small problem takes well under 5 s (20 s is the worker's floor for one).
        QVERIFY2(wall < 45, qPrintable(QString::number(wall)));
        QVERIFY(std::abs(b.split.total() - b.elapsedSeconds) < 0.5);
        if (pool.probeSanitizer().memcheck)
            QCOMPARE(QString::fromStdString(b.bestGate), QStringLiteral("clean"));
    }

    void sanitizerGateJudgesKnownKernels()
    {
        auto problem = loadProblemFile(KF_SOURCE_DIR "/problems/seed/softmax.toml", "small");
        QVERIFY(problem.ok());
        PoolConfig pc;
        pc.worker.argv = workerArgv();
        WorkerPool pool(pc);
        QVERIFY(pool.start().ok());
        QVERIFY(pool.load(*problem).ok());
        const SanitizerProbe probe = pool.probeSanitizer();
        if (!probe.memcheck)
            QSKIP(qPrintable(QString::fromStdString("compute-sanitizer does not work here: " + probe.reason)));
        qInfo("compute-sanitizer %s, probe %.1f s%s", probe.version.c_str(), probe.seconds,
              probe.racecheck ? "" : (", " + probe.reason).c_str());

        struct Case {
            const char *file;
            std::vector<SanitizerTool> tools;
            const char *outcome;
            std::optional<SanitizerTool> finding;
            bool verifies; // correct under plain verification
        };
        const std::vector<Case> cases{
            {"tests/kernels/naive/softmax.cu", {SanitizerTool::Memcheck, SanitizerTool::Racecheck}, "clean", {}, true},
            {"tests/data/sanitizer/reads_past_x.cu",
             {SanitizerTool::Memcheck},
             "finding",
             SanitizerTool::Memcheck,
             true},
            {"tests/data/sanitizer/two_kernels_read_past_x.cu",
             {SanitizerTool::Memcheck},
             "finding",
             SanitizerTool::Memcheck,
             true},
            {"tests/data/sanitizer/shared_stats_race.cu",
             {SanitizerTool::Racecheck},
             "finding",
             SanitizerTool::Racecheck,
             false},
        };
        std::vector<SanitizeRequest> requests;
        for (const Case &c : cases) {
            if (c.tools.back() == SanitizerTool::Racecheck && !probe.racecheck)
                continue;
            QFile f(QStringLiteral(KF_SOURCE_DIR "/") + c.file);
            QVERIFY2(f.open(QIODevice::ReadOnly), c.file);
            SanitizeRequest r;
            r.key = c.file;
            r.source = f.readAll().toStdString();
            auto parsed = parseCandidate(r.source, c.file);
            QVERIFY2(parsed.ok(), parsed.ok() ? "" : parsed.error().text().c_str());
            for (const auto &l : parsed->launches)
                r.kernels.push_back(l.kernel);
            r.tools = c.tools;
            requests.push_back(r);
            if (c.verifies) { // the fault is invisible to verification
                auto v = pool.worker(0).verify(c.file, r.source, "", Policy::Strict, 5);
                QVERIFY(v.ok());
                QCOMPARE(QString::fromStdString(toString(v->verdict)), QStringLiteral("correct"));
            }
        }
        auto results = pool.sanitize(requests);
        for (std::size_t i = 0; i < results.size(); ++i) {
            const Case &c =
                *std::find_if(cases.begin(), cases.end(), [&](const Case &x) { return requests[i].key == x.file; });
            const SanitizeResult &r = results[i];
            qInfo("%s: %s in %.1f s%s%s", c.file, r.check.outcome.c_str(), r.check.seconds,
                  r.check.note.empty() ? "" : ": ", r.check.note.c_str());
            QCOMPARE(QString::fromStdString(r.check.outcome), QString::fromLatin1(c.outcome));
            QCOMPARE(r.finding.has_value(), c.finding.has_value());
            if (c.finding) {
                QVERIFY(*r.finding == *c.finding);
                QVERIFY(!r.report.empty());
            }
        }
    }
};

QTEST_GUILESS_MAIN(TestSearchGpu)
#include "test_search_gpu.moc"
