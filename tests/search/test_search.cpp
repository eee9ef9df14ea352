// The round loop against the fake worker and a scripted generator: rounds, the best never getting
// worse, no idea repeated on its parent, failures and repairs recorded, cancel and time budget
// leaving a consistent session, resume, and the trajectory report.
#include "search/trajectory.h"
#include "search_fixture.h"

#include <QtTest>

#include <algorithm>
#include <atomic>
#include <map>
#include <set>

using namespace kf;
using namespace kf::test;
using Clock = std::chrono::steady_clock;

namespace {

// A node as a search of an earlier process left it, before the store numbers it.
NodeRecord nodeRecord(std::optional<std::int64_t> parent, NodeKind kind, int round, std::string title,
                      std::string text = {})
{
    NodeRecord n;
    n.parent = parent;
    n.kind = kind;
    n.round = round;
    n.title = std::move(title);
    n.text = std::move(text);
    return n;
}

QString q(const std::string &s) { return QString::fromStdString(s); }

// Rounds 1-3: the best goes 1.5 -> 1.2 -> 1.2 (round 3's fastest, 1.25, is slower).
std::vector<ScriptedIdea> threeRounds()
{
    return {
        {"a", "Idea A", {fakeKernel(2.0), fakeKernel(1.5)}, false, {}},
        {"b", "Idea B", {fakeKernel(1.8), fakeKernel(0.1, "FAKE_WRONG")}, false, {}},
        {"c", "Idea C", {fakeKernel(1.6), fakeKernel(1.2)}, true, {}},
        {"d", "Idea D", {fakeKernel(1.3), fakeKernel(3.0)}, true, {}},
        {"e", "Idea E", {fakeKernel(1.4), fakeKernel(1.25)}, true, {}},
        {"f", "Idea F", {fakeKernel(1.9), fakeKernel(1.7)}, true, {}},
    };
}

std::optional<CandidateReading> reading(const NodeRecord &n) { return readCandidate(n); }

} // namespace

class TestSearch : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { QVERIFY2(!smallSoftmax().name.empty(), "problems/seed/softmax.toml did not load"); }

    void settingsRoundTrip()
    {
        SearchSettings s;
        s.rounds = 7;
        s.policy = Policy::Loose;
        s.timeBudgetSeconds = 120;
        s.repairs = 0;
        auto back = settingsFromJson(nlohmann::json(s));
        QVERIFY(back.ok());
        QCOMPARE(nlohmann::json(*back), nlohmann::json(s));
        QCOMPARE(back->policy, std::optional<Policy>(Policy::Loose));

        auto defaults = settingsFromJson(nlohmann::json::object());
        QVERIFY(defaults.ok());
        QCOMPARE(defaults->ideasPerRound, SearchSettings{}.ideasPerRound);

        auto bad = settingsFromJson({{"rounds", 0}});
        QVERIFY(!bad.ok());
        QVERIFY(q(bad.error().message).contains("rounds"));
        auto wrongType = settingsFromJson({{"top_k", "four"}});
        QVERIFY(!wrongType.ok());
        QVERIFY(q(wrongType.error().message).contains("top_k"));
        QVERIFY(!settingsFromJson({{"policy", "lax"}}).ok());
    }

    void topKAndBank()
    {
        SearchState st(2, 2);
        auto kernel = [](std::int64_t node, std::string idea, double ms) {
            KernelRecord k;
            k.node = node;
            k.ideaId = std::move(idea);
            k.result.verdict = Verdict::Correct;
            k.result.timing = Timing{};
            k.result.timing->medianMs = ms;
            return k;
        };
        QVERIFY(st.offer(kernel(1, "a", 2.0)));
        QVERIFY(st.offer(kernel(2, "a", 1.0)));
        QVERIFY(!st.offer(kernel(3, "b", 1.5)));
        QVERIFY(!st.offer(kernel(4, "c", 1.0))); // a tie is not a new best; the older stays first
        KernelRecord wrong = kernel(5, "d", 0.1);
        wrong.result.verdict = Verdict::Wrong;
        QVERIFY(!st.offer(wrong));
        auto top = st.topK();
        QCOMPARE(top.size(), std::size_t(2));
        QCOMPARE(top[0].node, std::int64_t(2));
        QCOMPARE(top[1].node, std::int64_t(4));
        auto bank = st.bank(); // one per idea: a's best, then c's
        QCOMPARE(bank.size(), std::size_t(2));
        QCOMPARE(bank[0].ideaId, std::string("a"));
        QCOMPARE(bank[1].ideaId, std::string("c"));
    }

    void roundsRunAndTheBestNeverGetsWorse()
    {
        Fixture f;
        QVERIFY(f.store);
        auto gen = std::make_shared<ScriptedGenerator>(threeRounds());
        auto search = f.search(gen, quickSettings(3));
        std::atomic<bool> cancel{false};
        Status s = search->run(cancel);
        QVERIFY2(s.ok(), s.ok() ? "" : s.error().text().c_str());
        QCOMPARE(kf::toString(search->stopReason()), kf::toString(StopReason::Rounds));
        QCOMPARE(search->roundsRun(), 3);

        auto rounds = f.nodes(NodeKind::Round);
        QCOMPARE(int(rounds.size()), 3);
        std::vector<double> best, roundBest;
        for (const auto &r : rounds) {
            QCOMPARE(r.status, std::string(node_status::Finished));
            auto summary = readRoundSummary(r);
            QVERIFY(summary);
            best.push_back(summary->bestMs);
            roundBest.push_back(summary->roundBestMs);
            QCOMPARE(summary->candidates, 4);
        }
        QCOMPARE(best, (std::vector<double>{1.5, 1.2, 1.2}));
        QCOMPARE(roundBest, (std::vector<double>{1.5, 1.2, 1.25}));

        auto finished = f.eventsOf<RoundFinished>();
        QCOMPARE(int(finished.size()), 3);
        for (std::size_t i = 1; i < finished.size(); ++i)
            QVERIFY(finished[i].bestMs <= finished[i - 1].bestMs);
        QCOMPARE(finished[1].bestIdea, std::string("Idea C"));
        QCOMPARE(int(f.eventsOf<RoundStarted>().size()), 3);
        QCOMPARE(int(f.eventsOf<IdeaProposed>().size()), 6);
        QCOMPARE(int(f.eventsOf<CandidateCompiled>().size()), 12);
        QCOMPARE(int(f.eventsOf<CandidateVerified>().size()), 12);
        QCOMPARE(int(f.eventsOf<CandidateTimed>().size()), 11);
        auto done = f.eventsOf<SearchFinished>();
        QCOMPARE(int(done.size()), 1);
        QCOMPARE(done[0].bestMs, 1.2);

        // What the generator saw: rounds in order, ideas tried so far, top-k fastest first.
        QCOMPARE(int(gen->contexts.size()), 3);
        for (int i = 0; i < 3; ++i) {
            QCOMPARE(gen->contexts[i].round, i + 1);
            QCOMPARE(int(gen->contexts[i].tried.size()), 2 * i);
            QVERIFY(gen->contexts[i].eager.has_value());
        }
        QVERIFY(gen->contexts[0].topK.empty());
        const auto &top = gen->contexts[2].topK;
        QCOMPARE(int(top.size()), 2);
        QCOMPARE(top[0].result.timing->medianMs, 1.2);
        QCOMPARE(top[1].result.timing->medianMs, 1.3);
        QCOMPARE(top[0].ideaId, std::string("c"));
        QCOMPARE(top[0].params["variant"].get<int>(), 2);
        // Round 2's ideas build on round 1's best.
        QCOMPARE(gen->proposed[2].parentNode, gen->contexts[1].topK[0].node);
        // The tried list says how each idea did.
        const auto &tried = gen->contexts[2].tried;
        QCOMPARE(tried[0].bestMs, 1.5);
        QCOMPARE(tried[0].correct, 2);
        QCOMPARE(tried[1].failed, 1);

        // The wrong candidate is recorded, never ranked, and was offered for repair.
        int wrong = 0;
        for (const auto &c : f.nodes(NodeKind::Candidate)) {
            QVERIFY(c.resultJson.has_value());
            if (c.status == "wrong") {
                ++wrong;
                QVERIFY(!c.reason.empty());
            }
        }
        QCOMPARE(wrong, 1);
        QCOMPARE(int(gen->repaired.size()), 1);
        QCOMPARE(kf::toString(gen->repaired[0].result.verdict), kf::toString(Verdict::Wrong));

        // Baseline and GPU are in the meta; the events table tells the story.
        auto meta = f.store->sessionMeta();
        QVERIFY(meta);
        QCOMPARE(baselineMedianMs(meta->baseline), 2.0);
        QVERIFY(q(meta->gpuName).contains("Fake GPU"));
        auto events = f.store->events();
        QVERIFY(events);
        std::map<std::string, int> kinds;
        for (const auto &e : *events)
            ++kinds[e.kind];
        QCOMPARE(kinds["round-started"], 3);
        QCOMPARE(kinds["round-finished"], 3);
        QCOMPARE(kinds["stopped"], 1);
    }

    void eventsReadAsOneLineEach()
    {
        Fixture f;
        ScriptedIdea bad{"bad", "Broken", {fakeKernel(1.0, "", "FAKE_COMPILE_ERROR;")}, false, {}};
        auto gen = std::make_shared<ScriptedGenerator>(std::vector<ScriptedIdea>{threeRounds()[0], bad});
        auto search = f.search(gen, quickSettings(1));
        std::atomic<bool> cancel{false};
        QVERIFY(search->run(cancel).ok());
        std::set<std::string> kinds;
        QStringList lines;
        for (const auto &e : f.events) {
            const std::string line = describe(e);
            QVERIFY(!line.empty());
            QVERIFY(line.find('\n') == std::string::npos);
            kinds.insert(eventKind(e));
            lines << q(eventKind(e) + ": " + line);
        }
        if (qEnvironmentVariableIsSet("KF_SHOW_EVENTS"))
            qInfo().noquote() << lines.join('\n');
        for (const char *k :
             {"search-started", "round-started", "idea-proposed", "candidate-queued", "candidate-compiled",
              "compile-failed", "candidate-verified", "candidate-timed", "round-finished", "stopped"})
            QVERIFY2(kinds.count(k), k);
        const QString all = lines.join('\n');
        QVERIFY(all.contains("eager PyTorch 2.0000 ms"));
        QVERIFY(all.contains("1.5000 ms, 1.33x eager (new best)"));
        QVERIFY(all.contains("stopped (rounds)"));
    }

    void anIdeaIsNeverRepeatedOnItsParent()
    {
        Fixture f;
        auto gen = std::make_shared<ScriptedGenerator>(threeRounds());
        gen->repeatFirst = true;
        auto search = f.search(gen, quickSettings(3));
        std::atomic<bool> cancel{false};
        QVERIFY(search->run(cancel).ok());
        std::set<std::pair<std::string, std::int64_t>> seen;
        auto ideas = f.nodes(NodeKind::Idea);
        QCOMPARE(int(ideas.size()), 6);
        for (const auto &n : ideas) {
            IdeaInfo info = readIdeaInfo(n);
            QVERIFY2(seen.insert({info.ideaId, info.parentKernel}).second, info.ideaId.c_str());
        }
        bool skipped = false;
        for (const auto &m : f.eventsOf<SearchMessage>())
            skipped = skipped || q(m.text).contains("already tried");
        QVERIFY(skipped);
    }

    void failuresAndRepairsAreRecorded()
    {
        Fixture f;
        // FAKE_FAULT: the worker reports an illegal address and dies (the compiler is unaffected).
        ScriptedIdea idea{"f",
                          "Faulty",
                          {fakeKernel(1.0, "FAKE_FAULT"), fakeKernel(1.0, "", "FAKE_COMPILE_ERROR;"),
                           "// @launch k grid(1) block(32) args(y, out)\nextern \"C\" __global__ void k() {}\n",
                           fakeKernel(1.0)},
                          false,
                          fakeKernel(0.9)};
        auto gen = std::make_shared<ScriptedGenerator>(std::vector<ScriptedIdea>{idea});
        auto search = f.search(gen, quickSettings(1, 1, 4));
        std::atomic<bool> cancel{false};
        QVERIFY(search->run(cancel).ok());

        std::map<std::string, int> statuses;
        std::map<std::int64_t, NodeRecord> byId;
        for (const auto &c : f.nodes(NodeKind::Candidate)) {
            ++statuses[c.status];
            byId[c.id] = c;
        }
        QCOMPARE(statuses["crashed"], 1);
        QCOMPARE(statuses["compile error"], 2);
        QCOMPARE(statuses["correct"], 4); // the good draft and three repairs
        int repairs = 0;
        for (const auto &[id, c] : byId) {
            auto r = reading(c);
            QVERIFY(r);
            if (c.status == "compile error") {
                if (q(c.reason).contains("directives")) {
                    QVERIFY(q(c.reason).contains("y"));
                } else {
                    auto logs = f.store->logs(c.id);
                    QVERIFY(logs && !logs->empty());
                    QVERIFY(!r->result.compileLog.empty());
                }
            }
            if (c.status == "crashed")
                QVERIFY(!c.reason.empty());
            if (r->draft.repairOf) {
                ++repairs;
                QCOMPARE(*c.parent, r->draft.repairOf); // under the candidate it repairs
                QVERIFY(byId[r->draft.repairOf].status != "correct");
                QCOMPARE(r->draft.repairDepth, 1);
            }
        }
        QCOMPARE(repairs, 3);
        QCOMPARE(int(f.eventsOf<CompileFailed>().size()), 2);
        QCOMPARE(search->state().bestMs(), 0.9);
        QCOMPARE(f.nodes(NodeKind::Idea)[0].status, std::string("correct"));
    }

    void cancelMidRoundLeavesAConsistentSession()
    {
        Fixture f({"--time-ms", "2", "--verify-ms", "300"}, 1);
        std::vector<std::string> drafts;
        for (int i = 0; i < 8; ++i)
            drafts.push_back(fakeKernel(2.0 - 0.1 * i));
        auto gen = std::make_shared<ScriptedGenerator>(std::vector<ScriptedIdea>{{"slow", "Slow", drafts, false, {}}});
        auto search = std::make_unique<Search>(f.problem, gen, quickSettings(3, 1, 8), *f.pool, *f.compiler, *f.store);
        std::atomic<bool> cancel{false};
        std::set<std::int64_t> timed;
        Clock::time_point cancelledAt;
        search->setEventCallback([&](const SearchEvent &e) {
            if (auto *t = std::get_if<CandidateTimed>(&e)) {
                timed.insert(t->node);
                if (timed.size() == 2) {
                    cancel = true;
                    cancelledAt = Clock::now();
                }
            }
        });
        QVERIFY(search->run(cancel).ok());
        QVERIFY(std::chrono::duration<double>(Clock::now() - cancelledAt).count() < 3.0);
        QCOMPARE(kf::toString(search->stopReason()), kf::toString(StopReason::Cancelled));
        search.reset();
        QVERIFY(f.store->close().ok());

        auto reopened = SessionStore::open(f.path(), true);
        QVERIFY(reopened);
        auto nodes = reopened->allNodes();
        QVERIFY(nodes);
        int correct = 0, queued = 0;
        for (const auto &n : *nodes) {
            if (n.kind == NodeKind::Round) {
                QCOMPARE(n.status, std::string(node_status::Stopped));
                QCOMPARE(n.reason, std::string("cancelled"));
            }
            if (n.kind != NodeKind::Candidate)
                continue;
            if (n.status == "correct") {
                ++correct;
                QVERIFY(readCandidate(n).has_value());
            } else {
                QCOMPARE(n.status, std::string("queued"));
                QCOMPARE(n.reason, std::string("cancelled"));
                QVERIFY(!n.resultJson.has_value());
                ++queued;
            }
        }
        for (auto id : timed) {
            auto it = std::find_if(nodes->begin(), nodes->end(), [&](const NodeRecord &n) { return n.id == id; });
            QVERIFY(it != nodes->end());
            QCOMPARE(it->status, std::string("correct"));
        }
        QVERIFY(correct >= 2);
        QVERIFY(queued >= 1);
        QCOMPARE(correct + queued, 8);
        auto events = reopened->events();
        QVERIFY(events && !events->empty());
        QCOMPARE(events->back().kind, std::string("stopped"));
        QCOMPARE(events->back().data["reason"].get<std::string>(), std::string("cancelled"));
    }

    void cancelWhileCompiling()
    {
        if (Fixture::realCompiler())
            QSKIP("a hanging compile needs the fake compiler");
        Fixture f;
        // The fake compiler hangs on FAKE_HANG; the others compile at once.
        auto gen = std::make_shared<ScriptedGenerator>(std::vector<ScriptedIdea>{
            {"h", "Hangs", {fakeKernel(1.0, "FAKE_HANG"), fakeKernel(1.0), fakeKernel(1.1)}, false, {}}});
        auto search = std::make_unique<Search>(f.problem, gen, quickSettings(2, 1, 3), *f.pool, *f.compiler, *f.store);
        std::atomic<bool> cancel{false};
        int compiled = 0;
        search->setEventCallback([&](const SearchEvent &e) {
            if (std::holds_alternative<CandidateCompiled>(e) && ++compiled == 2)
                cancel = true;
        });
        const auto start = Clock::now();
        QVERIFY(search->run(cancel).ok());
        QVERIFY(std::chrono::duration<double>(Clock::now() - start).count() < 10.0);
        QCOMPARE(kf::toString(search->stopReason()), kf::toString(StopReason::Cancelled));
        for (const auto &c : f.nodes(NodeKind::Candidate)) {
            QCOMPARE(c.status, std::string("queued"));
            QCOMPARE(c.reason, std::string("cancelled"));
        }
        QCOMPARE(f.nodes(NodeKind::Idea)[0].status, std::string(node_status::Stopped));
    }

    void resumeContinuesAtTheNextRound()
    {
        Fixture f;
        auto first = std::make_shared<ScriptedGenerator>(threeRounds());
        {
            auto search = f.search(first, quickSettings(2));
            std::atomic<bool> cancel{false};
            QVERIFY(search->run(cancel).ok());
        }
        QVERIFY(f.store->close().ok());
        auto reopened = SessionStore::open(f.path());
        QVERIFY(reopened);
        f.store.emplace(std::move(*reopened));

        // The stored settings say 2 rounds: nothing more to do.
        auto again = std::make_shared<ScriptedGenerator>(threeRounds());
        {
            auto search = Search::resume(*f.store, again, *f.pool, *f.compiler);
            QVERIFY(search);
            std::atomic<bool> cancel{false};
            QVERIFY((*search)->run(cancel).ok());
            QCOMPARE(kf::toString((*search)->stopReason()), kf::toString(StopReason::Rounds));
            QCOMPARE((*search)->roundsRun(), 0);
        }

        // Two more rounds: they are numbered 3 and 4 and start from what the session knows.
        const std::vector<ScriptedIdea> all = threeRounds();
        std::vector<ScriptedIdea> more(all.begin() + 4, all.end());
        more.push_back({"g", "Idea G", {fakeKernel(1.1)}, true, {}});
        more.push_back({"h", "Idea H", {fakeKernel(1.15)}, true, {}});
        auto second = std::make_shared<ScriptedGenerator>(more);
        auto search = Search::resume(*f.store, second, *f.pool, *f.compiler, quickSettings(4));
        QVERIFY(search);
        std::atomic<bool> cancel{false};
        QVERIFY((*search)->run(cancel).ok());
        QCOMPARE((*search)->roundsRun(), 2);
        QCOMPARE(second->contexts.front().round, 3);
        QCOMPARE(int(second->contexts.front().tried.size()), 4);
        QCOMPARE(second->contexts.front().topK.front().result.timing->medianMs, 1.2);
        std::vector<int> numbers;
        for (const auto &r : f.nodes(NodeKind::Round))
            numbers.push_back(r.round);
        QCOMPARE(numbers, (std::vector<int>{1, 2, 3, 4}));
        QCOMPARE((*search)->state().bestMs(), 1.1);
        auto meta = f.store->sessionMeta();
        QCOMPARE(meta->settings["rounds"].get<int>(), 4);
    }

    void resumeClosesWhatADeadProcessLeftOpen()
    {
        Fixture f;
        auto root = f.store->addNode(nodeRecord(std::nullopt, NodeKind::Root, 0, "softmax"));
        NodeRecord round = nodeRecord(*root, NodeKind::Round, 1, "Round 1");
        round.status = "running";
        auto roundId = f.store->addNode(round);
        NodeRecord idea = nodeRecord(*roundId, NodeKind::Idea, 1, "Idea X", "text");
        idea.status = "queued";
        idea.resultJson = R"({"idea_id": "x", "parent_kernel": 0})";
        auto ideaId = f.store->addNode(idea);
        NodeRecord cand = nodeRecord(*ideaId, NodeKind::Candidate, 1, "draft", fakeKernel(1.0));
        cand.status = "queued";
        auto candId = f.store->addNode(cand);
        QVERIFY(candId);

        auto gen = std::make_shared<ScriptedGenerator>(std::vector<ScriptedIdea>{
            {"x", "Idea X again", {fakeKernel(1.0)}, false, {}}, {"y", "Idea Y", {fakeKernel(0.8)}, false, {}}});
        auto search = Search::resume(*f.store, gen, *f.pool, *f.compiler, quickSettings(2, 2, 1));
        QVERIFY(search);
        std::atomic<bool> cancel{false};
        QVERIFY((*search)->run(cancel).ok());
        QCOMPARE(f.store->node(*roundId)->status, std::string(node_status::Interrupted));
        QCOMPARE(f.store->node(*ideaId)->status, std::string(node_status::Interrupted));
        QCOMPARE(readIdeaInfo(*f.store->node(*ideaId)).ideaId, std::string("x")); // kept
        QCOMPARE(f.store->node(*candId)->reason, std::string(node_status::Interrupted));
        // "x" was tried on the reference already; round 2 skipped it and ran "y".
        auto ideas = f.nodes(NodeKind::Idea);
        QCOMPARE(int(ideas.size()), 2);
        QCOMPARE(readIdeaInfo(ideas[1]).ideaId, std::string("y"));
        QCOMPARE(ideas[1].round, 2);
    }

    void theTimeBudgetStopsTheLoop()
    {
        Fixture f({"--time-ms", "2", "--verify-ms", "150"}, 1);
        std::vector<ScriptedIdea> many;
        for (int i = 0; i < 60; ++i)
            many.push_back({"i" + std::to_string(i),
                            "Idea " + std::to_string(i),
                            {fakeKernel(1.0 + i), fakeKernel(1.5 + i)},
                            false,
                            {}});
        auto gen = std::make_shared<ScriptedGenerator>(many);
        SearchSettings s = quickSettings(100, 2, 2);
        s.timeBudgetSeconds = 1.0;
        auto search = f.search(gen, s);
        std::atomic<bool> cancel{false};
        const auto start = Clock::now();
        QVERIFY(search->run(cancel).ok());
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        QCOMPARE(kf::toString(search->stopReason()), kf::toString(StopReason::TimeBudget));
        QVERIFY2(seconds < 6.0, QByteArray::number(seconds));
        QVERIFY(search->roundsRun() >= 1);
        QVERIFY(search->roundsRun() < 100);
        for (const auto &c : f.nodes(NodeKind::Candidate))
            if (c.status == "queued")
                QCOMPARE(c.reason, std::string("time budget"));
    }

    void noMoreIdeasStops()
    {
        Fixture f;
        auto gen = std::make_shared<ScriptedGenerator>(
            std::vector<ScriptedIdea>{{"only", "Only", {fakeKernel(1.0)}, false, {}}});
        auto search = f.search(gen, quickSettings(5, 2, 1));
        std::atomic<bool> cancel{false};
        QVERIFY(search->run(cancel).ok());
        QCOMPARE(kf::toString(search->stopReason()), kf::toString(StopReason::NoMoreIdeas));
        QCOMPARE(search->roundsRun(), 1);
        QCOMPARE(int(f.nodes(NodeKind::Round).size()), 1); // no empty round node
    }

    void errorsStopWithAReason()
    {
        {
            Fixture f;
            auto gen = std::make_shared<ScriptedGenerator>(threeRounds());
            gen->failPropose = true;
            auto search = f.search(gen, quickSettings(2));
            std::atomic<bool> cancel{false};
            Status s = search->run(cancel);
            QVERIFY(!s.ok());
            QCOMPARE(kf::toString(search->stopReason()), kf::toString(StopReason::Error));
            QCOMPARE(kf::toString(f.eventsOf<SearchFinished>().back().reason), kf::toString(StopReason::Error));
        }
        {
            Fixture f;
            auto gen = std::make_shared<ScriptedGenerator>(threeRounds());
            gen->unsupported =
                makeError(ErrorCode::Unsupported, "aten::fft_fft is not in the catalogue; try an LLM generator");
            auto search = f.search(gen, quickSettings(2));
            std::atomic<bool> cancel{false};
            Status s = search->run(cancel);
            QVERIFY(!s.ok());
            QVERIFY(q(s.error().message).contains("aten::fft_fft"));
            QVERIFY(f.nodes(NodeKind::Round).empty());
        }
        {
            Fixture f({"--compile"}); // a worker without a GPU
            auto search = f.search(std::make_shared<ScriptedGenerator>(threeRounds()), quickSettings(2));
            std::atomic<bool> cancel{false};
            Status s = search->run(cancel);
            QVERIFY(!s.ok());
            QCOMPARE(toString(s.error().code), std::string("no-gpu"));
        }
        {
            Fixture f;
            Problem other = f.problem;
            other.name = "matmul";
            Search search(other, std::make_shared<ScriptedGenerator>(threeRounds()), quickSettings(1), *f.pool,
                          *f.compiler, *f.store);
            std::atomic<bool> cancel{false};
            Status s = search.run(cancel);
            QVERIFY(!s.ok());
            QVERIFY(q(s.error().message).contains("softmax"));
        }
    }

    void trajectoryFromARecordedSession()
    {
        Fixture f;
        auto search = f.search(std::make_shared<ScriptedGenerator>(threeRounds()), quickSettings(3));
        std::atomic<bool> cancel{false};
        QVERIFY(search->run(cancel).ok());
        auto t = readTrajectory(*f.store);
        QVERIFY(t);
        QCOMPARE(t->eagerMs, 2.0);
        QCOMPARE(int(t->rows.size()), 3);
        QCOMPARE(t->rows[0].bestMs, 1.5);
        QCOMPARE(t->rows[1].bestMs, 1.2);
        QCOMPARE(t->rows[2].bestMs, 1.2);
        QVERIFY(t->rows[0].improved && t->rows[1].improved && !t->rows[2].improved);
        QCOMPARE(t->rows[1].idea, std::string("Idea C"));
        QCOMPARE(t->rows[2].idea, std::string("Idea C"));
        QVERIFY(qAbs(t->rows[1].percentOfReference - 2.0 / 1.2 * 100) < 1e-9);
        QCOMPARE(t->rows[0].candidates, 4);
        QCOMPARE(t->rows[0].correct, 3);

        const QString table = q(trajectoryTable(*t));
        QVERIFY(table.contains("% of reference"));
        QVERIFY(table.contains("166.7 %"));
        QVERIFY(table.contains("133.3 %"));
        QVERIFY(table.contains("Idea C"));

        const QStringList csv = q(trajectoryCsv(*t)).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(csv.size(), 4);
        QVERIFY(csv[0].startsWith("round,best_ms,percent_of_reference"));
        QVERIFY2(csv[1].startsWith("1,1.5,133.33,1.3333,"), qPrintable(csv[1]));
        QVERIFY(csv[2].contains(",Idea C,1,"));
        QVERIFY(csv[3].contains(",Idea C,0,1.25,"));
    }
};

QTEST_GUILESS_MAIN(TestSearch)
#include "test_search.moc"
