// The worker and compile pools against the fake worker: results in order, timing one at a time
// per GPU, crashes costing one candidate only, cancel, and the compile cache hook.
#include "eval/compile_pool.h"
#include "eval/worker_pool.h"

#include <QtTest>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

using namespace kf;
using namespace std::chrono_literals;

namespace {

const std::string kFake = KF_FAKE_WORKER;

Problem fakeProblem()
{
    Problem p;
    p.name = "fake";
    p.path = "fake.toml";
    p.text = "name = \"fake\"\n";
    return p;
}

struct LogEntry {
    std::string kind;
    long long pid = 0, start = 0, end = 0;
    std::string key;
};

std::vector<LogEntry> readLog(const std::string &path)
{
    std::ifstream in(path);
    std::vector<LogEntry> out;
    for (std::string line; std::getline(in, line);) {
        std::istringstream s(line);
        LogEntry e;
        s >> e.kind >> e.pid;
        if (e.kind == "time")
            s >> e.start >> e.end >> e.key;
        else if (e.kind == "verify")
            s >> e.key;
        out.push_back(e);
    }
    return out;
}

QString q(const std::string &s) { return QString::fromStdString(s); }

PoolConfig poolConfig(std::vector<std::string> extra, std::vector<int> gpus, int perGpu)
{
    PoolConfig c;
    c.worker.argv = {kFake};
    c.worker.argv.insert(c.worker.argv.end(), extra.begin(), extra.end());
    c.worker.handshakeTimeout = 10s;
    c.worker.requestTimeout = 10s;
    c.gpus = std::move(gpus);
    c.workersPerGpu = perGpu;
    return c;
}

EvalRequest request(int i, const std::string &marker = "")
{
    EvalRequest r;
    r.key = "c" + std::to_string(i);
    r.source = "// candidate " + std::to_string(i) + "\n" + marker;
    r.trials = 2;
    r.timingTrials = 100;
    return r;
}

} // namespace

class TestWorkerPool : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

    std::string logPath(const char *name) { return (m_dir.path() + "/" + name).toStdString(); }

private slots:
    void resultsInOrderTimingSerialised()
    {
        std::string log = logPath("pool.log");
        WorkerPool pool(poolConfig({"--log", log, "--time-ms", "40", "--verify-ms", "60"}, {0}, 2));
        QCOMPARE(pool.size(), std::size_t(2));
        auto started = pool.start();
        QVERIFY2(started.ok(), started.ok() ? "" : started.error().text().c_str());
        QVERIFY(pool.load(fakeProblem()).ok());

        std::vector<EvalRequest> requests;
        for (int i = 0; i < 10; ++i)
            requests.push_back(request(i, i == 3 ? "FAKE_CRASH" : i == 5 ? "FAKE_WRONG" : ""));
        std::vector<int> seen(requests.size(), 0);
        auto results = pool.evaluate(requests, [&](std::size_t index, const EvalResult &) { ++seen[index]; });

        QCOMPARE(results.size(), requests.size());
        for (std::size_t i = 0; i < results.size(); ++i) {
            QCOMPARE(seen[i], 1);
            const auto &r = results[i];
            if (i == 3) {
                QCOMPARE(q(toString(r.verdict)), QString("crashed"));
                QVERIFY2(r.reason.find("simulated illegal address in c3") != std::string::npos, r.reason.c_str());
            } else if (i == 5) {
                QCOMPARE(q(toString(r.verdict)), QString("wrong"));
                QVERIFY(r.reason.find("for c5") != std::string::npos);
                QVERIFY(!r.timing);
            } else {
                QVERIFY2(r.verdict == Verdict::Correct, (std::to_string(i) + ": " + r.reason).c_str());
                QCOMPARE(q(r.reason), q("checked c" + std::to_string(i)));
                QVERIFY(r.timing.has_value());
            }
        }

        auto entries = readLog(log);
        std::vector<LogEntry> timings;
        std::set<long long> verifiers;
        for (const auto &e : entries) {
            if (e.kind == "time")
                timings.push_back(e);
            if (e.kind == "verify")
                verifiers.insert(e.pid);
        }
        QCOMPARE(timings.size(), std::size_t(8));
        QVERIFY2(verifiers.size() >= 2, "both workers verified candidates");
        std::sort(timings.begin(), timings.end(), [](auto &a, auto &b) { return a.start < b.start; });
        for (std::size_t i = 1; i < timings.size(); ++i)
            QVERIFY2(timings[i].start >= timings[i - 1].end,
                     ("timing of " + timings[i].key + " overlaps " + timings[i - 1].key).c_str());
        // Verification did overlap: the pool is parallel where it may be.
        int restarts = pool.worker(0).restarts() + pool.worker(1).restarts();
        QCOMPARE(restarts, 1);
    }

    void oneWorkerPerGpu()
    {
        std::string log = logPath("gpus.log");
        WorkerPool pool(poolConfig({"--log", log, "--time-ms", "150"}, {0, 1}, 1));
        QVERIFY(pool.start().ok());
        QCOMPARE(q(pool.worker(0).info()->gpu.name), QString("Fake GPU [0]"));
        QCOMPARE(q(pool.worker(1).info()->gpu.name), QString("Fake GPU [1]"));
        QCOMPARE(pool.gpuOf(1), 1);
        QVERIFY(pool.load(fakeProblem()).ok());
        auto baseline = pool.baseline(10);
        QVERIFY(baseline.ok());
        QCOMPARE(pool.worker(1).baselineMs(), 2.0);
        std::vector<EvalRequest> requests{request(0), request(1), request(2), request(3)};
        auto results = pool.evaluate(requests);
        for (const auto &r : results)
            QVERIFY(r.verdict == Verdict::Correct && r.timing);
    }

    void suspectBelowFloor()
    {
        WorkerPool pool(poolConfig({}, {0}, 1));
        QVERIFY(pool.start().ok());
        QVERIFY(pool.load(fakeProblem()).ok());
        auto ceilings = pool.ceilings();
        QVERIFY(ceilings.ok());
        QCOMPARE(ceilings->bandwidthGBs, 4000.0);
        auto results = pool.evaluate(
            {request(0, "FAKE_FAST"), request(1), request(2, "FAKE_INCONSISTENT"), request(3, "FAKE_ENGINE")});
        // The worker judges the timed runs; the pool keeps its verdict.
        QCOMPARE(q(toString(results[0].verdict)), QString("suspect"));
        QVERIFY2(results[0].reason.find("physical floor") != std::string::npos, results[0].reason.c_str());
        QCOMPARE(q(toString(results[1].verdict)), QString("correct"));
        QVERIFY(results[1].timingCheck && results[1].timingCheck->runs == 100);
        QCOMPARE(q(toString(results[2].verdict)), QString("inconsistent"));
        QVERIFY2(!results[2].timing, "no time for timed runs that failed their check");
        QVERIFY(results[2].reason.find("timed run 7") != std::string::npos);
        // The engine could not judge it: an engine error, not a verdict on the kernel.
        QCOMPARE(q(toString(results[3].verdict)), QString("engine error"));
        QVERIFY(results[3].reason.find("out of GPU memory") != std::string::npos);
        // 8e6 bytes at 4000 GB/s: 2 µs, the fp32 floor; the fake's flops are negligible.
        QVERIFY(qFuzzyCompare(results[1].floorMs, 0.002));
    }

    void hangCostsOneCandidate()
    {
        WorkerPool pool(poolConfig({}, {0}, 2));
        QVERIFY(pool.start().ok());
        QVERIFY(pool.load(fakeProblem()).ok());
        std::vector<EvalRequest> requests{request(0), request(1, "FAKE_HANG"), request(2), request(3, "FAKE_GARBAGE"),
                                          request(4)};
        for (auto &r : requests)
            r.timeout = 1s;
        auto results = pool.evaluate(requests);
        QCOMPARE(q(toString(results[1].verdict)), QString("timed out"));
        QCOMPARE(q(toString(results[3].verdict)), QString("crashed"));
        QVERIFY2(results[3].reason.find("protocol") != std::string::npos, results[3].reason.c_str());
        for (int i : {0, 2, 4})
            QVERIFY(results[std::size_t(i)].verdict == Verdict::Correct);
    }

    void cancel()
    {
        WorkerPool pool(poolConfig({}, {0}, 2));
        QVERIFY(pool.start().ok());
        QVERIFY(pool.load(fakeProblem()).ok());
        std::vector<EvalRequest> requests;
        for (int i = 0; i < 6; ++i) {
            requests.push_back(request(i, "FAKE_HANG"));
            requests.back().timeout = 30s;
        }
        std::thread canceller([&] {
            std::this_thread::sleep_for(300ms);
            pool.cancel();
        });
        QElapsedTimer timer;
        timer.start();
        auto results = pool.evaluate(requests);
        canceller.join();
        QVERIFY(timer.elapsed() < 10000);
        QCOMPARE(results.size(), requests.size());
        for (const auto &r : results) {
            QCOMPARE(q(toString(r.verdict)), QString("queued"));
            QCOMPARE(q(r.reason), QString("cancelled"));
        }
        // The pool works again afterwards.
        auto again = pool.evaluate({request(7)});
        QVERIFY(again[0].verdict == Verdict::Correct);
    }

    void missingWorker()
    {
        PoolConfig c;
        c.worker.argv = {"/nonexistent/kernelforge-worker"};
        c.workersPerGpu = 2;
        WorkerPool pool(c);
        auto started = pool.start();
        QVERIFY(!started.ok());
        QCOMPARE(pool.startErrors().size(), std::size_t(2));
        auto results = pool.evaluate({request(0), request(1), request(2)});
        QCOMPARE(results.size(), std::size_t(3));
        for (const auto &r : results) {
            QCOMPARE(q(toString(r.verdict)), QString("crashed"));
            QVERIFY2(r.reason.find("cannot start") != std::string::npos, r.reason.c_str());
        }
    }

    // ---- compile pool ----

    void compileAllInOrder()
    {
        std::string log = logPath("compile.log");
        CompilePoolConfig c;
        c.argv = {kFake, "--log", log};
        c.processes = 2;
        c.cacheLookup = [](const CompileJob &job) -> std::optional<CompileOutput> {
            if (job.source.find("CACHED") == std::string::npos)
                return std::nullopt;
            CompileOutput hit;
            hit.ok = true;
            hit.cubin = "from cache";
            return hit;
        };
        CompilePool pool(c);
        QCOMPARE(pool.size(), std::size_t(2));
        std::vector<CompileJob> jobs;
        for (int i = 0; i < 7; ++i) {
            std::string marker = i == 2 ? "FAKE_COMPILE_ERROR" : i == 4 ? "FAKE_CRASH" : i == 6 ? "CACHED" : "";
            jobs.push_back(CompileJob{"// job " + std::to_string(i) + " " + marker, {"k"}, "sm_90a"});
        }
        int calls = 0;
        auto results = pool.compileAll(jobs, [&](std::size_t, const Result<CompileOutput> &) { ++calls; });
        QCOMPARE(calls, 7);
        QCOMPARE(results.size(), jobs.size());
        for (std::size_t i = 0; i < results.size(); ++i) {
            QVERIFY2(results[i].ok(), results[i].ok() ? "" : results[i].error().text().c_str());
            const CompileOutput &out = *results[i];
            if (i == 2) {
                QVERIFY(!out.ok);
                QCOMPARE(out.diagnostics.at(0).line, 3);
            } else if (i == 4) {
                QVERIFY(!out.ok);
                QVERIFY2(out.log.find("simulated illegal address") != std::string::npos, out.log.c_str());
            } else if (i == 6) {
                QVERIFY(out.ok && out.cached);
                QCOMPARE(q(out.cubin), QString("from cache"));
            } else {
                QVERIFY(out.ok);
                QCOMPARE(out.cubin,
                         std::string("\x7f"
                                     "ELF\0\xff",
                                     6) +
                             jobs[i].source);
            }
        }
        // The cache hit never reached a process.
        int compiles = 0;
        for (const auto &e : readLog(log))
            compiles += e.kind == "compile";
        QCOMPARE(compiles, 6);

        // The crashed process is replaced when its slot is next used (lazily, so at most once).
        std::vector<CompileJob> again(4, CompileJob{"// again", {"k"}, "sm_90a"});
        for (const auto &r : pool.compileAll(again))
            QVERIFY(r.ok() && r->ok);
        QVERIFY(pool.restarts() <= 1);
        auto single = pool.compile(CompileJob{"// single", {"k"}, "sm_90a"});
        QVERIFY(single.ok() && single->ok);
    }

    void compilePoolMissingWorker()
    {
        CompilePoolConfig c;
        c.argv = {"/nonexistent/kernelforge-worker"};
        c.processes = 2;
        CompilePool pool(c);
        auto results = pool.compileAll({CompileJob{"a", {"k"}, "sm_90a"}, CompileJob{"b", {"k"}, "sm_90a"}});
        QCOMPARE(results.size(), std::size_t(2));
        for (const auto &r : results) {
            QVERIFY(!r.ok());
            QVERIFY2(r.error().message.find("/nonexistent/kernelforge-worker --compile") != std::string::npos,
                     r.error().message.c_str());
        }
    }

    void defaultSizeIsTheCoreCount()
    {
        CompilePoolConfig config;
        config.argv = {kFake};
        CompilePool pool(config);
        QCOMPARE(pool.size(), std::size_t(std::max(1u, std::thread::hardware_concurrency())));
    }
};

QTEST_GUILESS_MAIN(TestWorkerPool)
#include "test_worker_pool.moc"
