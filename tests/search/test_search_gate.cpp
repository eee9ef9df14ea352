// The sanitizer gate without a GPU: the stand-in compute-sanitizer (tests/eval/fake_sanitizer.cpp)
// around the fake worker. A probe that fails turns the gate off with a message; a finding demotes
// a kernel (memcheck: verdict sanitizer; racecheck: racy) with the report attached and the next
// best takes its place; racecheck runs only on kernels with shared memory; a kernel is run under
// the tool once, in this run and the next. Also the tool's output as the engine reads it.
#include "eval/sanitizer.h"
#include "search/trajectory.h"
#include "search_fixture.h"

#include <QFile>
#include <QtTest>

#include <atomic>
#include <map>

using namespace kf;
using namespace kf::test;

namespace {

QString q(const std::string &s) { return QString::fromStdString(s); }

// A kernel body with static shared memory, for the fake compiler (FAKE_SMEM) and for NVRTC alike
// (ctest runs the compile pool on the real worker when it is built).
std::string withSharedMemory(double ms, const std::string &marker = "")
{
    return fakeKernel(ms, "FAKE_SMEM=128 " + marker,
                      "__shared__ float tile[32]; tile[threadIdx.x] = x[threadIdx.x]; __syncthreads(); "
                      "out[threadIdx.x] = tile[31 - threadIdx.x];");
}

QStringList linesOf(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
}

// "sanitize TOOL sNODE" lines of the fake worker's log, counted per tool and node.
std::map<std::pair<QString, std::int64_t>, int> sanitizerRuns(const QString &log)
{
    std::map<std::pair<QString, std::int64_t>, int> out;
    for (const QString &line : linesOf(log)) {
        const QStringList w = line.split(' ');
        if (w.size() == 3 && w[0] == "sanitize" && w[2].startsWith('s'))
            ++out[{w[1], w[2].mid(1).toLongLong()}];
    }
    return out;
}

int ran(const std::map<std::pair<QString, std::int64_t>, int> &runs, const char *tool, std::int64_t node)
{
    auto it = runs.find({QString::fromLatin1(tool), node});
    return it == runs.end() ? 0 : it->second;
}

std::optional<NodeRecord> nodeWithStatus(const Fixture &f, const std::string &status)
{
    for (const auto &n : f.nodes(NodeKind::Candidate))
        if (n.status == status)
            return n;
    return std::nullopt;
}

std::int64_t nodeTimed(const Fixture &f, double ms)
{
    for (const auto &n : f.nodes(NodeKind::Candidate))
        if (auto r = readCandidate(n); r && r->result.timing && r->result.timing->medianMs == ms)
            return n.id;
    return 0;
}

QString messages(const Fixture &f)
{
    QStringList out;
    for (const auto &m : f.eventsOf<SearchMessage>())
        out << q(m.text);
    return out.join('\n');
}

Status runSearch(Fixture &f, std::shared_ptr<Generator> g, SearchSettings s)
{
    auto search = f.search(std::move(g), s);
    std::atomic<bool> cancel{false};
    return search->run(cancel);
}

} // namespace

class TestSearchGate : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    QString path(const char *name) const { return m_dir.filePath(name); }

private slots:
    void readsTheToolsOutput()
    {
        const std::string memcheck = "========= COMPUTE-SANITIZER\n"
                                     "========= Invalid __global__ write of size 4 bytes\n"
                                     "=========     at k()+0x20 in candidate.cu:6\n"
                                     "=========     by thread (0,0,0) in block (0,0,0)\n"
                                     "=========\n"
                                     "========= ERROR SUMMARY: 2 errors\n";
        SanitizerLog m = parseSanitizerLog(memcheck);
        QVERIFY(m.summary);
        QCOMPARE(m.errors, 2);
        QCOMPARE(q(m.first), QStringLiteral("Invalid __global__ write of size 4 bytes"));

        const std::string racecheck =
            "========= COMPUTE-SANITIZER\n"
            "========= Error: Race reported between Write access at k(int *)+0x2b0 in a.cu:41\n"
            "=========     and Read access at k(int *)+0x1a0 in a.cu:29 [4 hazards]\n"
            "=========\n"
            "========= RACECHECK SUMMARY: 2 hazards displayed (1 error, 1 warning)\n";
        SanitizerLog r = parseSanitizerLog(racecheck);
        QVERIFY(r.summary);
        QCOMPARE(r.errors, 1);
        QVERIFY(q(r.first).startsWith("Error: Race reported"));

        QVERIFY(r.toolFailure.empty());
        // The tool's own failure counts as an error, and is told apart from a hazard.
        const std::string failed = "========= COMPUTE-SANITIZER\n"
                                   "========= Internal Sanitizer Error: The Sanitizer failed to handle a hardware "
                                   "exception.\n"
                                   "=========\n"
                                   "========= Error: process didn't terminate successfully\n"
                                   "========= ERROR SUMMARY: 1 error\n";
        SanitizerLog f = parseSanitizerLog(failed);
        QCOMPARE(f.errors, 1);
        QVERIFY(q(f.toolFailure).startsWith("Internal Sanitizer Error: The Sanitizer failed"));

        SanitizerLog clean = parseSanitizerLog("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n");
        QVERIFY(clean.summary);
        QCOMPARE(clean.errors, 0);
        QVERIFY(!parseSanitizerLog("Device not supported\n").summary);

        const std::string big(40000, 'x');
        const std::string trimmed = trimSanitizerReport(big + "\n========= ERROR SUMMARY: 9 errors\n", 4096);
        QVERIFY(trimmed.size() < 4200);
        QVERIFY(q(trimmed).contains("bytes left out"));
        QVERIFY(q(trimmed).endsWith("ERROR SUMMARY: 9 errors\n"));
    }

    void filtersTheCandidatesOwnKernels()
    {
        QCOMPARE(q(sanitizerKernelFilter({"row_max"})), QStringLiteral("kns=row_max"));
        QCOMPARE(q(sanitizerKernelFilter({"gemm<128, 4>", "ns::gemm<64, 2>"})), QStringLiteral("kns=gemm"));
        QCOMPARE(q(sanitizerKernelFilter({"row_stats", "normalize", "row_stats"})),
                 QStringLiteral("regex=.*(row_stats|normalize).*"));
        auto argv = sanitizerArgv({"/opt/cs"}, SanitizerTool::Racecheck, {"k"}, "/tmp/l.log", {"kernelforge-worker"});
        const QString line = q(joinArgv(argv));
        QVERIFY2(line.startsWith("/opt/cs --tool racecheck --error-exitcode 86 --print-limit 20"), qPrintable(line));
        QVERIFY(line.contains("--log-file /tmp/l.log"));
        QVERIFY(line.contains("--racecheck-report analysis"));
        QVERIFY(!line.contains("--padding"));
        QVERIFY(line.endsWith("--kernel-name kns=k kernelforge-worker"));
        const QString memcheck =
            q(joinArgv(sanitizerArgv({"/opt/cs"}, SanitizerTool::Memcheck, {"k"}, "/tmp/l.log", {"w"})));
        QVERIFY2(memcheck.contains("--padding 4096"), qPrintable(memcheck));
    }

    void probeWithoutTheTool()
    {
        SanitizerProbe p = probeSanitizer(SanitizerSetup{});
        QVERIFY(!p.memcheck && !p.racecheck);
        QVERIFY2(q(p.reason).contains("not found") && q(p.reason).contains("KF_SANITIZER"), qPrintable(q(p.reason)));
    }

    void probeFailureTurnsTheGateOff()
    {
        const QString tool = path("unsupported.log");
        Fixture f({"--time-ms", "2"}, 1, {KF_FAKE_SANITIZER, "--fake-unsupported", "--fake-log", tool.toStdString()});
        auto gen = std::make_shared<ScriptedGenerator>(
            std::vector<ScriptedIdea>{{"a", "A", {fakeKernel(1.0, "FAKE_OOB"), fakeKernel(2.0)}, false, {}}});
        QVERIFY(runSearch(f, gen, quickSettings(1)).ok());
        const QString text = messages(f);
        QVERIFY2(text.contains("sanitizer gate off") && text.contains("Device not supported"), qPrintable(text));
        QCOMPARE(int(text.count("sanitizer gate")), 1);
        QVERIFY(f.eventsOf<CandidateSanitizing>().empty());
        // Only the probe ran under the tool (memcheck; racecheck is not tried after it fails).
        QCOMPARE(linesOf(tool).size(), 1);
        QCOMPARE(f.nodes(NodeKind::Candidate).size(), std::size_t(2));
        QVERIFY(nodeWithStatus(f, "correct"));
        QVERIFY(!nodeWithStatus(f, "sanitizer"));

        auto events = f.store->events();
        QVERIFY(events);
        bool recorded = false;
        for (const auto &e : *events)
            if (e.kind == "search-started") {
                QCOMPARE(e.data["sanitizer"]["on"].get<bool>(), false);
                recorded = q(e.data["sanitizer"]["reason"].get<std::string>()).contains("Device not supported");
            }
        QVERIFY(recorded);
        auto logs = f.store->allLogs();
        QVERIFY(logs);
        bool logged = false;
        for (const auto &l : *logs)
            logged = logged || q(l.text).contains("sanitizer gate off");
        QVERIFY(logged);
    }

    void settingsAndCompileOnlySkipIt()
    {
        const QString tool = path("skipped.log");
        const std::vector<std::string> sanitizer{KF_FAKE_SANITIZER, "--fake-log", tool.toStdString()};
        {
            Fixture f({"--time-ms", "2"}, 1, sanitizer);
            auto gen = std::make_shared<ScriptedGenerator>(
                std::vector<ScriptedIdea>{{"a", "A", {fakeKernel(1.0, "FAKE_OOB")}, false, {}}});
            SearchSettings s = quickSettings(1);
            s.sanitize = false;
            QVERIFY(runSearch(f, gen, s).ok());
            QVERIFY2(messages(f).contains("sanitizer gate off: sanitize = false"), qPrintable(messages(f)));
            QVERIFY(nodeWithStatus(f, "correct"));
        }
        {
            Fixture f({"--time-ms", "2"}, 1, sanitizer);
            auto gen = std::make_shared<ScriptedGenerator>(
                std::vector<ScriptedIdea>{{"a", "A", {fakeKernel(1.0, "FAKE_OOB")}, false, {}}});
            SearchSettings s = quickSettings(1);
            s.compileOnly = true;
            QVERIFY(runSearch(f, gen, s).ok());
            QVERIFY(!messages(f).contains("sanitizer gate"));
            QVERIFY(nodeWithStatus(f, "needs gpu"));
        }
        QVERIFY(linesOf(tool).isEmpty()); // the tool never ran, not even the probe
    }

    void aFindingDemotesAndTheNextBestTakesItsPlace()
    {
        const QString log = path("finding.log");
        Fixture f({"--time-ms", "2", "--log", log.toStdString()}, 2);
        auto gen = std::make_shared<ScriptedGenerator>(std::vector<ScriptedIdea>{
            {"a", "A", {fakeKernel(1.0, "FAKE_OOB"), fakeKernel(1.5), fakeKernel(2.0)}, false, {}}});
        SearchSettings s = quickSettings(1, 1, 3);
        s.repairs = 0;
        QVERIFY(runSearch(f, gen, s).ok());
        QVERIFY2(messages(f).contains("sanitizer gate on: compute-sanitizer 2025.3.1.0"), qPrintable(messages(f)));

        auto bad = nodeWithStatus(f, "sanitizer");
        QVERIFY(bad);
        QVERIFY2(q(bad->reason).contains("memcheck: 1 error: Invalid __global__ write of size 4 bytes"),
                 qPrintable(q(bad->reason)));
        auto r = readCandidate(*bad);
        QVERIFY(r && r->result.sanitizer);
        QCOMPARE(q(r->result.sanitizer->outcome), QStringLiteral("finding"));
        QCOMPARE(r->result.sanitizer->tools, std::vector<std::string>{"memcheck"});
        QVERIFY(q(r->result.sanitizerReport).contains("0 bytes after the nearest allocation"));
        QVERIFY(q(r->result.sanitizerReport).contains("ERROR SUMMARY: 1 error"));
        QVERIFY(r->result.timing); // what was measured stays, for the record
        QCOMPARE(r->draft.params["variant"].get<int>(), 1);

        // The round's best and the session's best are the next kernel, which was checked too.
        auto round = f.nodes(NodeKind::Round).front();
        auto summary = readRoundSummary(round);
        QVERIFY(summary);
        QCOMPARE(summary->roundBestMs, 1.5);
        QCOMPARE(summary->bestMs, 1.5);
        QCOMPARE(summary->correct, 2);
        QCOMPARE(summary->sanitizerFindings, 1);
        QVERIFY(summary->sanitized >= 2);
        QVERIFY(summary->sanitizerSeconds > 0);
        // The round's event went out before the final gate: its best was provisional, and said so.
        auto finished = f.eventsOf<RoundFinished>();
        QCOMPARE(finished.back().roundBestMs, 1.0);
        QCOMPARE(q(finished.back().bestGate), QStringLiteral("pending"));
        const SearchFinished done = f.eventsOf<SearchFinished>().back();
        QCOMPARE(done.bestMs, 1.5);
        QCOMPARE(q(done.budget.bestGate), QStringLiteral("clean"));
        QCOMPARE(done.budget.gateFindings, 1);
        QCOMPARE(q(summary->bestGate), QStringLiteral("clean"));
        const std::int64_t next = nodeTimed(f, 1.5);
        auto nextReading = readCandidate(*f.store->node(next));
        QVERIFY(nextReading->result.sanitizer);
        QCOMPARE(q(nextReading->result.sanitizer->outcome), QStringLiteral("clean"));

        bool demoted = false;
        for (const auto &e : f.eventsOf<CandidateSanitized>())
            if (e.node == bad->id) {
                demoted = e.check.outcome == "finding" && e.verdict == Verdict::Sanitizer;
                QVERIFY(q(describe(e)).contains("sanitizer finding, now sanitizer"));
            }
        QVERIFY(demoted);
        auto idea = f.nodes(NodeKind::Idea).front();
        QCOMPARE(idea.status, std::string("correct"));
        QCOMPARE(nlohmann::json::parse(*idea.resultJson)["failed"].get<int>(), 1);
        auto logs = f.store->logs(bad->id);
        QVERIFY(logs && !logs->empty());

        auto t = readTrajectory(*f.store);
        QVERIFY(t);
        QCOMPARE(t->rows.front().bestMs, 1.5);
        QVERIFY(q(trajectoryTable(*t)).contains("compute-sanitizer:"));
        QCOMPARE(t->sanitizer.findings, 1);
    }

    // The gate finds the first round's best faulty while the generator thinks about the second
    // round; the kernel is repaired with the second round's failures, and the repair is checked.
    void aKernelDemotedWhileRoundsRunIsRepaired()
    {
        Fixture f;
        auto gen = std::make_shared<ScriptedGenerator>(std::vector<ScriptedIdea>{
            {"a", "A", {fakeKernel(1.0, "FAKE_OOB"), fakeKernel(1.5)}, false, fakeKernel(0.9)},
            {"b", "B", {fakeKernel(3.0)}, true, {}}});
        gen->thinkMs = {500};
        QVERIFY(runSearch(f, gen, quickSettings(2, 1, 2)).ok());
        QCOMPARE(int(gen->repaired.size()), 1);
        QCOMPARE(q(toString(gen->repaired[0].result.verdict)), QStringLiteral("sanitizer"));
        QVERIFY(q(gen->repaired[0].result.sanitizerReport).contains("Invalid __global__ write"));
        bool background = false;
        for (const auto &e : f.eventsOf<CandidateSanitizing>())
            background = background || (e.node == gen->repaired[0].node && e.background);
        QVERIFY(background);
        auto rounds = f.nodes(NodeKind::Round);
        QCOMPARE(int(rounds.size()), 2);
        auto summary = readRoundSummary(rounds.back());
        QCOMPARE(summary->roundBestMs, 0.9); // the repair, made in round 2
        QCOMPARE(summary->bestMs, 0.9);
        QCOMPARE(q(f.eventsOf<SearchFinished>().back().budget.bestGate), QStringLiteral("clean"));
    }

    void racecheckOnlyWithSharedMemory()
    {
        const QString log = path("race.log"), tool = path("race-tool.log");
        Fixture f({"--time-ms", "2", "--log", log.toStdString()}, 1,
                  {KF_FAKE_SANITIZER, "--fake-log", tool.toStdString()});
        // The fastest races; the next one has no shared memory; the slowest is never a finalist.
        auto gen = std::make_shared<ScriptedGenerator>(std::vector<ScriptedIdea>{
            {"a", "A", {withSharedMemory(1.0, "FAKE_SMEM_RACE"), fakeKernel(1.2), withSharedMemory(1.4)}, false, {}}});
        SearchSettings s = quickSettings(1, 1, 3);
        s.repairs = 0;
        QVERIFY(runSearch(f, gen, s).ok());

        auto racy = nodeWithStatus(f, "racy");
        QVERIFY(racy);
        QVERIFY2(q(racy->reason).contains("racecheck: 1 error: Error: Race reported"), qPrintable(q(racy->reason)));
        QVERIFY(q(readCandidate(*racy)->result.sanitizerReport).contains("RACECHECK SUMMARY"));
        QCOMPARE(readCandidate(*racy)->result.sanitizer->tools, (std::vector<std::string>{"memcheck", "racecheck"}));
        const std::int64_t plain = nodeTimed(f, 1.2), shared = nodeTimed(f, 1.4);
        auto runs = sanitizerRuns(log);
        QCOMPARE(ran(runs, "memcheck", racy->id), 1);
        QCOMPARE(ran(runs, "racecheck", racy->id), 1);
        QCOMPARE(ran(runs, "memcheck", plain), 1);
        QCOMPARE(ran(runs, "racecheck", plain), 0);
        QCOMPARE(readCandidate(*f.store->node(plain))->result.sanitizer->tools, std::vector<std::string>{"memcheck"});
        // Only what the search reports as its best is checked at the end.
        QCOMPARE(ran(runs, "memcheck", shared), 0);
        QVERIFY(!readCandidate(*f.store->node(shared))->result.sanitizer);
        // Each run checked the candidate's own kernel only.
        int filtered = 0;
        for (const QString &line : linesOf(tool))
            filtered += line.endsWith(" kns=k");
        QCOMPARE(filtered, 3);
        QCOMPARE(search_best(f), 1.2);
    }

    // Racecheck that fails on a kernel (as it did on a transposed convolution's implicit GEMM
    // whose memcheck was clean) cannot vouch for it: the kernel is dropped from the best, as for a
    // finding, but its verdict and reason say the tool failed instead of calling it racy.
    void aToolFailureIsNotCalledARace()
    {
        const QString log = path("tool-failure.log");
        Fixture f({"--time-ms", "2", "--log", log.toStdString()}, 1, {KF_FAKE_SANITIZER});
        auto gen = std::make_shared<ScriptedGenerator>(std::vector<ScriptedIdea>{
            {"a", "A", {withSharedMemory(1.0, "FAKE_TOOL_FAILURE"), fakeKernel(1.2)}, false, {}}});
        SearchSettings s = quickSettings(1, 1, 2);
        s.repairs = 0;
        QVERIFY(runSearch(f, gen, s).ok());

        QVERIFY(!nodeWithStatus(f, "racy"));
        auto failed = nodeWithStatus(f, "sanitizer");
        QVERIFY(failed);
        QVERIFY2(q(failed->reason)
                     .contains("racecheck: the tool failed on this kernel, so it cannot vouch for it "
                               "(Internal Sanitizer Error"),
                 qPrintable(q(failed->reason)));
        QCOMPARE(q(readCandidate(*failed)->result.sanitizer->outcome), QStringLiteral("finding"));
        QCOMPARE(search_best(f), 1.2);
    }

    void aKernelIsSanitizedOnce()
    {
        const QString log = path("once.log");
        Fixture f({"--time-ms", "2", "--log", log.toStdString()}, 2);
        // Idea B repeats a source of idea A: its result serves both.
        const std::string shared = fakeKernel(1.3);
        std::vector<ScriptedIdea> ideas{
            {"a", "A", {fakeKernel(1.5), shared}, false, {}},
            {"b", "B", {fakeKernel(2.0) + "// b\n", shared}, false, {}},
            {"c", "C", {fakeKernel(1.2), fakeKernel(1.9)}, true, {}},
            {"d", "D", {fakeKernel(1.1), fakeKernel(2.5)}, true, {}},
        };
        auto gen = std::make_shared<ScriptedGenerator>(ideas);
        gen->thinkMs = {400}; // the gate goes through the top-k while the generator thinks
        QVERIFY(runSearch(f, gen, quickSettings(2)).ok());
        auto runs = sanitizerRuns(log);
        QVERIFY(!runs.empty());
        for (const auto &[key, n] : runs)
            QVERIFY2(n == 1, qPrintable(QStringLiteral("%1 #%2 ran %3 times").arg(key.first).arg(key.second).arg(n)));
        int reused = 0;
        for (const auto &c : f.nodes(NodeKind::Candidate))
            if (auto r = readCandidate(c); r && r->result.sanitizer && r->result.sanitizer->sameAs != 0) {
                ++reused;
                QCOMPARE(q(r->result.sanitizer->outcome), QStringLiteral("clean"));
                QCOMPARE(r->result.sanitizer->seconds, 0.0);
                QVERIFY(!runs.count({"memcheck", c.id}));
            }
        QCOMPARE(reused, 1);

        // A second run of the session checks nothing it already checked.
        const std::size_t before = linesOf(log).size();
        auto more = std::make_shared<ScriptedGenerator>(std::vector<ScriptedIdea>{});
        auto resumed = Search::resume(*f.store, more, *f.pool, *f.compiler, quickSettings(3));
        QVERIFY(resumed);
        std::atomic<bool> cancel{false};
        QVERIFY((*resumed)->run(cancel).ok());
        int sanitizedAgain = 0;
        for (const QString &line : linesOf(log).mid(int(before)))
            sanitizedAgain += line.startsWith("sanitize ");
        QCOMPARE(sanitizedAgain, 0);
    }

    void theProbeRunsOncePerProcess()
    {
        const QString tool = path("probe.log");
        const std::vector<std::string> sanitizer{KF_FAKE_SANITIZER, "--fake-log", tool.toStdString()};
        for (int i = 0; i < 2; ++i) {
            Fixture f({"--time-ms", "2"}, 1, sanitizer);
            auto gen = std::make_shared<ScriptedGenerator>(
                std::vector<ScriptedIdea>{{"a", "A", {fakeKernel(1.0)}, false, {}}});
            QVERIFY(runSearch(f, gen, quickSettings(1)).ok());
            QVERIFY(messages(f).contains("sanitizer gate on"));
        }
        int probes = 0;
        for (const QString &line : linesOf(tool))
            probes += line.contains("kf_sanitizer_probe");
        QCOMPARE(probes, 2); // memcheck and racecheck, once
    }

    void racecheckRefusedLeavesMemcheck()
    {
        const QString log = path("memcheck-only.log");
        Fixture f({"--time-ms", "2", "--log", log.toStdString()}, 1,
                  {KF_FAKE_SANITIZER, "--fake-racecheck-unsupported"});
        auto gen = std::make_shared<ScriptedGenerator>(
            std::vector<ScriptedIdea>{{"a", "A", {withSharedMemory(1.0, "FAKE_SMEM_RACE")}, false, {}}});
        QVERIFY(runSearch(f, gen, quickSettings(1)).ok());
        const QString text = messages(f);
        QVERIFY2(text.contains("sanitizer gate on") && text.contains("racecheck does not work here"), qPrintable(text));
        auto runs = sanitizerRuns(log);
        const std::int64_t k = nodeTimed(f, 1.0);
        QCOMPARE(ran(runs, "memcheck", k), 1);
        QCOMPARE(ran(runs, "racecheck", k), 0);
        QVERIFY(nodeWithStatus(f, "correct"));
    }

private:
    static double search_best(const Fixture &f)
    {
        auto t = readTrajectory(*f.store);
        return t && !t->rows.empty() ? t->rows.back().bestMs : 0;
    }
};

QTEST_GUILESS_MAIN(TestSearchGate)
#include "test_search_gate.moc"
