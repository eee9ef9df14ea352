// Where a search's time goes, against the fake worker and the stand-in compute-sanitizer with
// costs in the H200's proportions (docs/search.md, "Where the budget goes"): a search with a time
// budget ends by the budget plus one evaluation, setup included; the six parts of the split add up
// to its wall time; the sanitizer gate checks the best at the end, in time the budget kept for
// it, or while the generator thinks, and never while a kernel is timed; a best found too late for
// the tool is reported unchecked, plainly.
#include "search/trajectory.h"
#include "search_fixture.h"

#include <QFile>
#include <QtTest>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>

using namespace kf;
using namespace kf::test;

namespace {

using Clock = std::chrono::steady_clock;

QString q(const std::string &s) { return QString::fromStdString(s); }

struct Interval {
    long long start = 0, end = 0;
};

// "time PID START END KEY" lines of the fake worker's log; "START END TOOL" lines of the fake
// sanitizer's --fake-times file.
std::vector<Interval> intervals(const QString &path, const QString &kind)
{
    std::vector<Interval> out;
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return out;
    for (const QString &line : QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts)) {
        const QStringList w = line.split(' ');
        if (kind == "time" && w.size() >= 4 && w[0] == "time")
            out.push_back({w[2].toLongLong(), w[3].toLongLong()});
        else if (kind == "sanitizer" && w.size() == 3)
            out.push_back({w[0].toLongLong(), w[1].toLongLong()});
    }
    return out;
}

// Nothing was timed while compute-sanitizer ran (the runs that ended; one cut off never writes).
bool timedApart(const QString &workerLog, const QString &sanitizerTimes, QString *why)
{
    const auto timings = intervals(workerLog, "time"), runs = intervals(sanitizerTimes, "sanitizer");
    for (const Interval &t : timings)
        for (const Interval &r : runs)
            if (t.start < r.end && r.start < t.end) {
                *why = QStringLiteral("a timing (%1..%2) overlaps a sanitizer run (%3..%4)")
                           .arg(t.start)
                           .arg(t.end)
                           .arg(r.start)
                           .arg(r.end);
                return false;
            }
    return !timings.empty();
}

// n ideas on the best so far, each a little faster than the one before, so every round has a new
// best for the gate to think about.
std::vector<ScriptedIdea> improving(int n, double from = 2.0)
{
    std::vector<ScriptedIdea> out;
    for (int i = 0; i < n; ++i) {
        const double ms = from - 0.01 * i;
        out.push_back(
            {"i" + std::to_string(i), "Idea " + std::to_string(i), {fakeKernel(ms), fakeKernel(ms + 0.005)}, true, {}});
    }
    return out;
}

int judged(const Fixture &f)
{
    int n = 0;
    if (auto t = readTrajectory(*f.store))
        for (const TrajectoryRow &r : t->rows)
            n += r.candidates;
    return n;
}

struct Timed {
    Status status = Ok{};
    double wall = 0;
};

Timed run(Search &search)
{
    std::atomic<bool> cancel{false};
    const auto start = Clock::now();
    Timed t;
    t.status = search.run(cancel);
    t.wall = std::chrono::duration<double>(Clock::now() - start).count();
    return t;
}

} // namespace

class TestSearchBudget : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString path(const QString &name) const { return m_dir.filePath(name); }

    // A fixture whose worker, compiler and compute-sanitizer take time. The --fake-times file is
    // named after the test, which also keeps each test's sanitizer probe its own.
    // `kernelMs` is added to the tool's time on every kernel but the probe's.
    std::unique_ptr<Fixture> fixture(const QString &name, int verifyMs, int timeMs, int compileMs, int sanitizerMs,
                                     int kernelMs = 0)
    {
        auto f = std::make_unique<Fixture>(
            std::vector<std::string>{"--time-ms", std::to_string(timeMs), "--verify-ms", std::to_string(verifyMs),
                                     "--log", path(name + ".log").toStdString()},
            1,
            std::vector<std::string>{KF_FAKE_SANITIZER, "--fake-ms", std::to_string(sanitizerMs), "--fake-kernel-ms",
                                     std::to_string(kernelMs), "--fake-times", path(name + ".times").toStdString()});
        CompilePoolConfig c;
        c.argv = {KF_FAKE_WORKER, "--compile-ms", std::to_string(compileMs)};
        c.processes = 2;
        f->compiler = std::make_unique<CompilePool>(c);
        return f;
    }

    // A search of `ideas` ideas, each faster than the last, two a round, under a time budget.
    static Timed runBudgeted(Fixture &f, int ideas, double budget, std::unique_ptr<Search> &search)
    {
        SearchSettings s = quickSettings(100, 2, 2);
        s.timeBudgetSeconds = budget;
        search = f.search(std::make_shared<ScriptedGenerator>(improving(ideas)), s);
        return run(*search);
    }

    // The split adds up to the run's wall time, and the session and the last event keep it.
    static void checkAccount(const Fixture &f, const Search &search, double wall)
    {
        const RunBudget &b = search.budget();
        QVERIFY2(std::abs(b.split.total() - b.elapsedSeconds) < 0.05,
                 qPrintable(QStringLiteral("%1 vs %2").arg(b.split.total()).arg(b.elapsedSeconds)));
        QVERIFY2(b.elapsedSeconds <= wall + 0.01 && b.elapsedSeconds > wall - 0.2,
                 qPrintable(QStringLiteral("%1 vs %2").arg(b.elapsedSeconds).arg(wall)));
        auto stored = f.store->metaJson(session_meta::Budget);
        QVERIFY(stored);
        QCOMPARE(q(stored->dump()), q(nlohmann::json(b).dump()));
        auto events = f.store->events();
        QVERIFY(events && !events->empty());
        QCOMPARE(q(events->back().kind), QStringLiteral("stopped"));
        QCOMPARE(q(events->back().data["budget"].dump()), q(nlohmann::json(b).dump()));
        auto t = readTrajectory(*f.store);
        QVERIFY(t && t->budget);
        QVERIFY(q(trajectoryTable(*t)).contains("last run: " + q(describe(b))));
        QCOMPARE(f.eventsOf<SearchFinished>().back().budget.bestGate, b.bestGate);
    }

private slots:
    // Costs in the H200's proportions, a twentieth of the time: a memcheck run of about 0.27 s
    // (~5 s there), evaluations of 0.12 s, compiles of 40 ms, a budget of 4 s (80 s there).
    void aBudgetIsKeptAndAccountedFor()
    {
        auto f = fixture("kept", 100, 20, 40, 150);
        std::unique_ptr<Search> search;
        const Timed t = runBudgeted(*f, 80, 4.0, search);
        QVERIFY(t.status.ok());
        QCOMPARE(q(toString(search->stopReason())), QStringLiteral("time budget"));
        const RunBudget &b = search->budget();
        qInfo("budget 4 s: %.2f s of wall time, %d rounds, %d candidates judged, best %.4f ms; gate %.0f %% of it; %s",
              t.wall, search->roundsRun(), judged(*f), search->state().bestMs(), 100 * b.split.gate / t.wall,
              describe(b).c_str());
        // One evaluation is 0.12 s here; the rest covers stopping worker processes on a busy machine.
        QVERIFY2(t.wall <= 4.0 + 0.12 + 0.6, qPrintable(QString::number(t.wall)));
        checkAccount(*f, *search, t.wall);
        QVERIFY(b.split.setup > 0.3); // the probe: two runs under the stand-in, 0.15 s each at least
        QVERIFY(b.split.compiling > 0);
        QVERIFY(b.split.verifying > 0);
        QVERIFY(b.split.timing > 0);
        // The best ran under the tool: as the final gate, in the part of the budget kept for it, or
        // while a compile left the GPU idle long enough. Once or twice, not once a round.
        QVERIFY(b.split.gate + b.gateBackgroundSeconds > 0.15);
        QVERIFY2(b.gateRuns >= 1 && b.gateRuns <= 2, qPrintable(QString::number(b.gateRuns)));
        QCOMPARE(q(b.bestGate), QStringLiteral("clean"));
        QVERIFY(search->roundsRun() >= 2);
        QString why;
        QVERIFY2(timedApart(path("kept.log"), path("kept.times"), &why), qPrintable(why));
        QVERIFY(q(describe(f->eventsOf<SearchFinished>().back())).contains("passed compute-sanitizer"));
        QVERIFY(q(describe(f->eventsOf<SearchStarted>().front())).contains("of the 4 s budget"));
    }

    // Setup is part of the budget: a budget spent in setup stops the search there, as a stop.
    void setupCountsAgainstTheBudget()
    {
        auto f = fixture("setup", 20, 5, 5, 700); // the probe alone takes 1.4 s
        std::unique_ptr<Search> search;
        const Timed t = runBudgeted(*f, 10, 1.0, search);
        QVERIFY2(t.status.ok(), t.status.ok() ? "" : t.status.error().text().c_str());
        QCOMPARE(q(toString(search->stopReason())), QStringLiteral("time budget"));
        QCOMPARE(search->roundsRun(), 0);
        QVERIFY2(t.wall < 1.0 + 0.6, qPrintable(QString::number(t.wall)));
        QVERIFY(search->budget().split.setup > 0.9);
        QVERIFY(f->nodes(NodeKind::Round).empty());
    }

    // The stand-in takes 1.5 s a tool here, more than a 1 s budget has left once a best is found:
    // the search uses the whole budget and says plainly that its best is unchecked.
    void aBestTooLateForTheGateIsReportedUnchecked()
    {
        // A first search probes the tool (the answer is kept for the process) and measures nothing
        // the second one can use: each run estimates afresh.
        {
            auto warm = fixture("late", 20, 5, 5, 1500);
            auto gen = std::make_shared<ScriptedGenerator>(improving(1));
            auto search = warm->search(gen, quickSettings(1, 1, 1));
            QVERIFY(run(*search).status.ok());
        }
        auto f = fixture("late", 20, 5, 5, 1500);
        const int before = int(intervals(path("late.times"), "sanitizer").size());
        std::unique_ptr<Search> search;
        const Timed t = runBudgeted(*f, 40, 1.0, search);
        QVERIFY(t.status.ok());
        QVERIFY2(t.wall < 1.0 + 0.03 + 0.6, qPrintable(QString::number(t.wall)));
        const RunBudget &b = search->budget();
        QVERIFY(b.bestNode != 0);
        QCOMPARE(q(b.bestGate), QStringLiteral("unchecked"));
        QVERIFY2(q(b.bestGateNote).contains("left no room for compute-sanitizer"), qPrintable(q(b.bestGateNote)));
        QCOMPARE(b.bestCheckedNode, std::int64_t(0));
        QCOMPARE(b.gateRuns, 0);
        QCOMPARE(int(intervals(path("late.times"), "sanitizer").size()), before);
        QVERIFY(q(describe(b)).contains("unchecked (the time budget left no room"));
        QVERIFY(q(describe(f->eventsOf<SearchFinished>().back())).contains("not checked by compute-sanitizer"));
        checkAccount(*f, *search, t.wall);
    }

    // The probe is quick, the tool on this problem's kernels is not (as on a large problem, where
    // it runs for a minute): the run on the best is stopped when the budget ends, and the best is
    // reported unchecked with how long the tool had run.
    void aGateRunPastTheBudgetIsStopped()
    {
        auto f = fixture("overrun", 20, 5, 5, 50, 4000);
        std::unique_ptr<Search> search;
        const Timed t = runBudgeted(*f, 4, 1.5, search);
        QVERIFY(t.status.ok());
        // The budget, plus at most the run's estimate (the probe's time and the problem's load).
        QVERIFY2(t.wall < 1.5 + 0.8, qPrintable(QString::number(t.wall)));
        const RunBudget &b = search->budget();
        qInfo("a gate slower than the budget: %.2f s of wall time; %s", t.wall, describe(b).c_str());
        QVERIFY(b.bestNode != 0);
        QCOMPARE(q(b.bestGate), QStringLiteral("unchecked"));
        QVERIFY2(q(b.bestGateNote).contains("had not finished when the time budget ran out"),
                 qPrintable(q(b.bestGateNote)));
        checkAccount(*f, *search, t.wall);
    }

    // A generator that thinks (a language model) leaves the GPU idle: the gate checks the best
    // then, and nothing is left for the end.
    void theGateRunsWhileTheGeneratorThinks()
    {
        auto f = fixture("thinks", 20, 5, 5, 100);
        std::vector<ScriptedIdea> ideas = improving(4);
        ideas.push_back({"slow", "Slower", {fakeKernel(3.0), fakeKernel(3.1)}, true, {}});
        ideas.push_back({"slower", "Slower still", {fakeKernel(3.2), fakeKernel(3.3)}, true, {}});
        auto gen = std::make_shared<ScriptedGenerator>(ideas);
        gen->thinkMs = {1000};
        auto search = f->search(gen, quickSettings(3));
        const Timed t = run(*search);
        QVERIFY(t.status.ok());
        const RunBudget &b = search->budget();
        qInfo("thinking generator: %.2f s of wall time, %d candidates judged; %s", t.wall, judged(*f),
              describe(b).c_str());
        QCOMPARE(q(b.bestGate), QStringLiteral("clean"));
        QVERIFY(b.gateBackgroundSeconds > 0.1);
        // Nothing ran at the end: what the gate cost the search is at most taking the GPU back.
        QVERIFY2(b.split.gate < 0.2, qPrintable(QString::number(b.split.gate)));
        int background = 0, final = 0;
        for (const auto &e : f->eventsOf<CandidateSanitizing>())
            (e.background ? background : final)++;
        QVERIFY(background >= 2);
        QCOMPARE(final, 0);
        // The third round's generator was shown kernels the gate had checked while it waited
        // (the second round's best is checked while the third round's ideas are thought of).
        const GenContext &third = gen->contexts.at(2);
        QVERIFY(std::any_of(third.bank.begin(), third.bank.end(),
                            [](const KernelRecord &k) { return k.result.sanitizer; }));
        QString why;
        QVERIFY2(timedApart(path("thinks.log"), path("thinks.times"), &why), qPrintable(why));
        checkAccount(*f, *search, t.wall);
    }

    // A run started while the GPU waits is stopped when the GPU is needed for timing sooner than
    // the last wait promised; its kernel waits for the next chance.
    void aRunGivesTheGpuBackForTiming()
    {
        auto f = fixture("back", 20, 5, 5, 300);
        auto gen = std::make_shared<ScriptedGenerator>(improving(8));
        gen->thinkMs = {1500, 1500, 0};
        auto search = f->search(gen, quickSettings(4));
        QVERIFY(run(*search).status.ok());
        bool putOff = false;
        for (const auto &e : f->eventsOf<CandidateSanitized>())
            putOff = putOff || e.putOff;
        QVERIFY(putOff);
        QCOMPARE(q(search->budget().bestGate), QStringLiteral("clean"));
        QString why;
        QVERIFY2(timedApart(path("back.log"), path("back.times"), &why), qPrintable(why));
    }
};

QTEST_GUILESS_MAIN(TestSearchBudget)
#include "test_search_budget.moc"
