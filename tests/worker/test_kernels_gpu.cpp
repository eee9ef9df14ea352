// On a GPU: every kernel under tests/kernels gets the verdict its `// @expect` line names (one of
// several where it says `a|b`), at the seed size and at the problem's small variant, with a reason,
// and the worker is usable again after each one (crashes and hangs included). Then what the
// checked timed runs cost, a kernel that memorised the answers of one seed, and a problem whose
// input takes 6.4 GB.
#include "support.h"

#include "gpu_gate.h"

#include "eval/worker_pool.h"

#include <QDirIterator>
#include <QStringList>
#include <QTest>

#include <algorithm>
#include <map>
#include <memory>
#include <sstream>

using namespace kf;

namespace {

constexpr int kTimedRuns = 20;

bool expected(const std::string &verdict, const std::string &expect)
{
    return QString::fromStdString(expect).split(QLatin1Char('|')).contains(QString::fromStdString(verdict));
}

double medianOf(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

} // namespace

class TestKernelsGpu : public QObject {
    Q_OBJECT
    // One worker per problem and size, loaded once.
    std::map<std::string, std::unique_ptr<WorkerClient>> m_workers;

    WorkerClient *workerFor(const std::string &problem, const std::string &variant)
    {
        auto &w = m_workers[problem + "/" + variant];
        if (!w) {
            w = std::make_unique<WorkerClient>(test::workerConfig());
            if (!w->start() || !w->load(test::seedProblem(problem, variant)))
                return nullptr;
            if (auto b = w->baseline(20))
                w->setBaselineMs(b->timing.medianMs);
            (void)w->ceilings();
        }
        return w.get();
    }

private slots:
    void initTestCase() { KF_REQUIRE_GPU(); }

    void kernels_data()
    {
        QTest::addColumn<QString>("path");
        QTest::addColumn<QString>("variant");
        QDirIterator it(QStringLiteral(KF_SOURCE_DIR "/tests/kernels"), {"*.cu"}, QDir::Files,
                        QDirIterator::Subdirectories);
        QStringList all;
        while (it.hasNext())
            all << it.next();
        all.sort();
        for (const QString &p : all)
            for (const QString &variant : {QStringLiteral("small"), QString()}) {
                const QString name = QDir(KF_SOURCE_DIR "/tests/kernels").relativeFilePath(p) + QLatin1Char('@') +
                    (variant.isEmpty() ? QStringLiteral("seed") : variant);
                QTest::newRow(qPrintable(name)) << p << variant;
            }
    }

    void kernels()
    {
        QFETCH(QString, path);
        QFETCH(QString, variant);
        const std::string src = test::readText(path);
        const std::string expect = test::expectation(src, "expect");
        const std::string problem = test::expectation(src, "problem");
        QVERIFY2(!expect.empty() && !problem.empty(), "the kernel names its problem and expected verdict");
        WorkerClient *w = workerFor(problem, variant.toStdString());
        QVERIFY2(w, "the worker loads the problem");
        auto r = w->evaluate("k", src, "", Policy::Strict, 5, kTimedRuns);
        QVERIFY2(r.ok(), r.ok() ? "" : r.error().text().c_str());
        qInfo("%s @%s: %s — %s", qPrintable(path.section('/', -2)), variant.isEmpty() ? "seed" : qPrintable(variant),
              toString(r->verdict).c_str(), r->reason.c_str());
        QVERIFY2(expected(toString(r->verdict), expect),
                 qPrintable(QStringLiteral("expected %1, got %2")
                                .arg(QString::fromStdString(expect), QString::fromStdString(toString(r->verdict)))));
        if (!r->trials.empty())
            QVERIFY2(r->seed != 0, "every evaluation that drew inputs records its seed");
        if (r->verdict != Verdict::Correct) {
            QVERIFY2(!r->reason.empty(), "every verdict but correct comes with a reason");
            if (r->verdict == Verdict::Inconsistent)
                QVERIFY2(!r->timing, "no time is reported for a timed run that failed its check");
        } else {
            QVERIFY(r->timing && r->timing->medianMs > 0);
            QVERIFY(r->timingCheck && r->timingCheck->checked);
            QCOMPARE(r->timingCheck->runs, kTimedRuns);
            QVERIFY2(r->timingCheck->inputSets >= 2, "timed runs cycle through at least two verified input sets");
        }
        // The worker (restarted where it died) answers again, with the problem still loaded.
        auto again = w->evaluate(
            "probe", test::readText(KF_SOURCE_DIR "/tests/kernels/naive/" + QString::fromStdString(problem) + ".cu"),
            "", Policy::Strict, 1, 3);
        QVERIFY2(again.ok() && again->verdict == Verdict::Correct, "the worker recovers");
    }

    // Checks run outside the event window: a correct kernel's checked time is within 5 % of its
    // time without the checks. Prints what checking costs in wall time (docs/verification.md).
    void checkedTimingIsOutsideTheWindow()
    {
        WorkerClient *w = workerFor("softmax", "");
        QVERIFY(w);
        const std::string src = test::readText(KF_SOURCE_DIR "/tests/kernels/naive/softmax.cu");
        auto v = w->verify("overhead", src, "", Policy::Strict, 5);
        QVERIFY(v.ok() && v->verdict == Verdict::Correct);
        std::vector<double> checked, unchecked, checkedWall, uncheckedWall;
        for (int round = 0; round < 3; ++round) {
            for (bool check : {true, false}) {
                auto t = w->time("overhead", 100, std::nullopt, check);
                QVERIFY2(t.ok() && t->timing, t.ok() ? t->reason.c_str() : t.error().text().c_str());
                (check ? checked : unchecked).push_back(t->timing->medianMs);
                (check ? checkedWall : uncheckedWall).push_back(t->check.wallSeconds);
            }
        }
        const double c = medianOf(checked), u = medianOf(unchecked);
        qInfo("naive softmax, 100 timed runs: median %.4f ms checked, %.4f ms unchecked (%+.2f %%); wall %.3f s "
              "checked, %.3f s unchecked (x%.2f)",
              c, u, 100 * (c / u - 1), medianOf(checkedWall), medianOf(uncheckedWall),
              medianOf(checkedWall) / medianOf(uncheckedWall));
        QVERIFY2(std::abs(c / u - 1) <= 0.05, "the checks stay outside the timed window");
    }

    // A kernel that memorised the answers of one seed: correct when evaluated with that seed,
    // wrong on the fresh seed every evaluation draws.
    void memorisedAnswers()
    {
        WorkerClient *w = workerFor("softmax", "small");
        QVERIFY(w);
        const std::uint64_t seed = 20250501;
        auto data = w->request({{"op", "trial_data"}, {"seed", seed}, {"trials", 5}}, std::chrono::seconds(120));
        QVERIFY2(data.ok(), data.ok() ? "" : data.error().text().c_str());
        const auto &trials = (*data)["trials"];
        std::ostringstream s;
        s.precision(9);
        const std::size_t n = trials[0]["outputs"]["out"].size();
        s << "// @precision fp32\n// @launch recall grid(1) block(256) args(x, out, i64(x.numel))\n";
        s << "__device__ const float keys[" << trials.size() << "] = {";
        for (const auto &t : trials)
            s << float(t["inputs"]["x"][0].get<double>()) << "f, ";
        s << "};\n__device__ const float answers[" << trials.size() << "][" << n << "] = {";
        for (const auto &t : trials) {
            s << "{";
            for (double v : t["outputs"]["out"].get<std::vector<double>>())
                s << float(v) << "f, ";
            s << "},\n";
        }
        s << "};\nextern \"C\" __global__ void recall(const float* x, float* out, long long n)\n{\n"
             "    int k = 0;\n    for (int i = 0; i < "
          << trials.size()
          << "; ++i) if (x[0] == keys[i]) k = i;\n"
             "    for (long long i = threadIdx.x; i < n; i += blockDim.x) out[i] = answers[k][i];\n}\n";
        auto replayed = w->evaluate("memo", s.str(), "", Policy::Strict, 5, 0, std::nullopt, seed);
        QVERIFY(replayed.ok());
        qInfo("memorised, seed %llu: %s — %s", (unsigned long long)seed, toString(replayed->verdict).c_str(),
              replayed->reason.c_str());
        QCOMPARE(QString::fromStdString(toString(replayed->verdict)), QStringLiteral("correct"));
        auto fresh = w->evaluate("memo", s.str(), "", Policy::Strict, 5, kTimedRuns);
        QVERIFY(fresh.ok());
        qInfo("memorised, fresh seed %llu: %s — %s", (unsigned long long)fresh->seed, toString(fresh->verdict).c_str(),
              fresh->reason.c_str());
        QCOMPARE(QString::fromStdString(toString(fresh->verdict)), QStringLiteral("wrong"));
        QVERIFY(fresh->seed != seed);
    }

    // A 6.4 GB input and output (KernelBench's level-1 elementwise size) verify and time on one GPU.
    void largeInput()
    {
        auto p = loadProblemFile(KF_SOURCE_DIR "/tests/data/large_swish.toml");
        QVERIFY2(p.ok(), p.ok() ? "" : p.error().text().c_str());
        m_workers.clear(); // the other workers' cached blocks would count against this one
        WorkerClient w(test::workerConfig());
        QVERIFY(w.start().ok());
        QVERIFY(w.load(*p).ok());
        if (auto b = w.baseline(10))
            w.setBaselineMs(b->timing.medianMs);
        // Three evaluations in one worker, as the built-in generator's ideas are tried one after
        // another: what one kept for its timed runs is gone before the next draws its inputs.
        for (int i = 0; i < 3; ++i) {
            auto r = w.evaluate("swish" + std::to_string(i), test::readText(KF_SOURCE_DIR "/tests/data/large_swish.cu"),
                                "", Policy::Strict, 5, 10);
            QVERIFY2(r.ok(), r.ok() ? "" : r.error().text().c_str());
            qInfo(
                "large_swish (6.4 GB a tensor), evaluation %d: %s — %s; %d input sets kept for timing; peak GPU memory "
                "%.1f GB; median %.3f ms",
                i + 1, toString(r->verdict).c_str(), r->reason.c_str(), r->timingCheck ? r->timingCheck->inputSets : 0,
                double(r->peakGpuBytes) / 1e9, r->timing ? r->timing->medianMs : 0.0);
            QCOMPARE(QString::fromStdString(toString(r->verdict)), QStringLiteral("correct"));
            QVERIFY(r->timingCheck && r->timingCheck->inputSets >= 2);
        }
    }

    // Two workers on one GPU: verification in parallel, timing one at a time, every verdict right.
    void poolOfTwo()
    {
        m_workers.clear();
        PoolConfig c;
        c.worker = test::workerConfig();
        c.workersPerGpu = 2;
        WorkerPool pool(c);
        QVERIFY(pool.start().ok());
        QVERIFY(pool.load(test::seedProblem("softmax")).ok());
        QVERIFY(pool.baseline(10).ok());
        const QString dir = QStringLiteral(KF_SOURCE_DIR "/tests/kernels/");
        const QStringList files{"naive/softmax.cu",
                                "adversarial/partial_write.cu",
                                "adversarial/softmax_zeros.cu",
                                "adversarial/out_of_bounds.cu",
                                "adversarial/poison_sniff.cu",
                                "naive/softmax.cu"};
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
            qInfo("pool %s: %s — %s", qPrintable(files[int(i)]), toString(results[i].verdict).c_str(),
                  results[i].reason.c_str());
            QVERIFY(expected(toString(results[i].verdict), want));
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
