// Searches with the LLM generators through the replay server, as CI runs them without a GPU:
// every round runs up to compilation, each candidate is really compiled with NVRTC and recorded
// as needing a GPU, failures are recorded where they belong, every exchange is kept with the
// nodes it produced, budgets stop the search cleanly, and no key reaches the session file.
#include "search/trajectory.h"
#include "search_support.h"

#include <QFile>
#include <QProcess>
#include <QtTest>

using namespace kf;
using namespace kf::test;
using llm::Protocol;

namespace {

QString q(const std::string &s) { return QString::fromStdString(s); }

std::optional<NodeRecord> titled(const std::vector<NodeRecord> &nodes, const std::string &prefix)
{
    for (const auto &n : nodes)
        if (n.title.rfind(prefix, 0) == 0)
            return n;
    return std::nullopt;
}

// Every byte of a session file and its sidecars, to look for a key in.
QByteArray fileBytes(const std::string &path)
{
    QByteArray all;
    for (const char *suffix : {"", "-wal", "-journal"}) {
        QFile f(QString::fromStdString(path + suffix));
        if (f.open(QIODevice::ReadOnly))
            all += f.readAll();
    }
    return all;
}

} // namespace

class TestLlmSearch : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { qputenv(kKeyEnv, kTestKey); }

    void compileOnlySearchRecordsEveryExchange()
    {
        if (!haveWorker())
            QSKIP("KERNELFORGE_WORKER is not set (run through ctest)");
        ScriptedServer replay(Protocol::OpenAI);
        LlmSearch f;
        QVERIFY(f.store);
        auto gen = llmGenerator(Protocol::OpenAI, replay.url());
        QVERIFY(gen);
        auto search = f.search(gen, llmSettings(2, true));
        std::atomic<bool> cancel{false};
        Status ran = search->run(cancel);
        QVERIFY2(ran, ran ? "" : qPrintable(q(ran.error().text())));
        QCOMPARE(q(toString(search->stopReason())), QString("rounds"));
        QCOMPARE(replay.ideasAsked(), 2);

        const auto rounds = f.nodes(NodeKind::Round);
        const auto ideas = f.nodes(NodeKind::Idea);
        const auto candidates = f.nodes(NodeKind::Candidate);
        QCOMPARE(int(rounds.size()), 2);
        QCOMPARE(int(ideas.size()), 3); // round 2 repeated "Block per row" on the same parent: skipped
        for (const auto &i : ideas)
            QCOMPARE(q(i.status), QString("needs gpu"));

        // Every candidate was compiled by NVRTC: a real compile error, or compiled and waiting for a GPU.
        QCOMPARE(int(candidates.size()), 5);
        int needsGpu = 0;
        for (const auto &c : candidates) {
            auto reading = readCandidate(c);
            QVERIFY2(reading, c.title.c_str());
            if (c.status == "needs gpu") {
                ++needsGpu;
                QVERIFY2(q(c.reason).contains("compiled for sm_"), qPrintable(q(c.reason)));
                QVERIFY(!reading->result.resources.empty());
                QVERIFY(reading->result.resources.begin()->second.registers > 0); // ptxas really ran
            }
        }
        QCOMPARE(needsGpu, 4);
        auto broken = titled(candidates, "Block per row, variant 2");
        QVERIFY(broken);
        QCOMPARE(q(broken->status), QString("compile error"));
        QVERIFY2(q(broken->reason).contains("rowMax"), qPrintable(q(broken->reason)));
        auto repaired = titled(candidates, "repair: ");
        QVERIFY(repaired);
        QCOMPARE(*repaired->parent, broken->id); // the repair hangs under what it repairs
        QCOMPARE(q(repaired->status), QString("needs gpu"));

        // Exchanges: 2 idea answers, 6 implementations (2 unusable), 1 repair.
        auto exchanges = f.store->allExchanges();
        QVERIFY(exchanges);
        QCOMPARE(int(exchanges->size()), 9);
        int failed = 0, truncated = 0;
        for (const auto &e : *exchanges) {
            QCOMPARE(e.generator, std::string("openai"));
            QCOMPARE(e.model, std::string("replay-model"));
            QCOMPARE(e.httpStatus, 200);
            QVERIFY(!e.prompt.empty() && !e.answer.empty() && !e.request.empty());
            QVERIFY(!e.nodes.empty());
            failed += !e.error.empty();
            // How each answer ended is kept with it: the one cut off, and the rest in full.
            const bool cut = e.ending == "truncated";
            truncated += cut;
            QCOMPARE(e.stopReason, std::string(cut ? "length" : "stop"));
            QVERIFY(cut || e.ending == "complete");
        }
        QCOMPARE(failed, 2);
        QCOMPARE(truncated, 1);

        // The prompt and answer behind an idea, a candidate and a repair.
        auto warp = titled(ideas, "Warp per row");
        QVERIFY(warp);
        auto behindIdea = f.store->exchanges(warp->id);
        QVERIFY(behindIdea);
        QCOMPARE(int(behindIdea->size()), 3); // the answer that proposed it, and its two implementations
        QCOMPARE(behindIdea->front().purpose, std::string("ideas"));
        QVERIFY(q(behindIdea->front().answer).contains("Warp per row"));
        bool noCodeKept = false;
        for (const auto &e : *behindIdea)
            if (q(e.error).contains("no ```cuda code block"))
                noCodeKept = q(e.answer).contains("assign one warp to each row"); // the raw text is kept
        QVERIFY(noCodeKept);
        auto logs = f.store->logs(warp->id);
        QVERIFY(logs);
        bool logged = false;
        for (const auto &l : *logs)
            logged = logged || q(l.text).contains("implement request failed: the answer has no ```cuda code block");
        QVERIFY(logged);
        auto behindRepair = f.store->exchanges(repaired->id);
        QVERIFY(behindRepair && behindRepair->size() == 1);
        QCOMPARE(behindRepair->front().purpose, std::string("repair"));
        QVERIFY(q(behindRepair->front().prompt).contains("rowMax"));
        auto roundExchanges = f.store->exchanges(rounds[1].id);
        QVERIFY(roundExchanges && roundExchanges->size() == 1);
        QVERIFY(q(roundExchanges->front().answer).contains("Vectorized float4 loads"));
        auto vec = titled(ideas, "Vectorized float4 loads");
        QVERIFY(vec);
        bool cutOff = false;
        // The Result must outlive the loop: `*` on a temporary would leave the loop a dangling range.
        const auto vecExchanges = f.store->exchanges(vec->id);
        QVERIFY(vecExchanges);
        for (const auto &e : *vecExchanges)
            cutOff = cutOff || q(e.error).contains("cut off at the token limit");
        QVERIFY(cutOff);

        // Round 2 was asked with what round 1 did.
        QVERIFY(q(roundExchanges->front().prompt)
                    .contains("\"Block per row\" from the reference: 2 compiled, not evaluated yet, 1 failed"));
        QVERIFY(q(roundExchanges->front().prompt).contains("\"Warp per row\""));

        // Tokens and cost per round: 1 + 4 + 1 requests of 1000 + 500 tokens in round 1.
        auto summary = readRoundSummary(rounds[0]);
        QVERIFY(summary);
        QCOMPARE(summary->usage.promptTokens, std::int64_t(6000));
        QCOMPARE(summary->usage.completionTokens, std::int64_t(3000));
        QCOMPARE(summary->usage.reasoningTokens, std::int64_t(600));
        QVERIFY(qAbs(summary->usage.cost - 0.012) < 1e-9);
        bool reported = false;
        for (const auto &e : f.events)
            if (auto *r = std::get_if<RoundFinished>(&e); r && r->round == 1)
                reported = r->tokens == 9000 && qAbs(r->cost - 0.012) < 1e-9 &&
                    q(describe(e)).contains("9000 tokens, cost 0.0120");
        QVERIFY(reported);

        // The generator's settings are kept for a resume, never its key.
        auto gs = f.store->metaJson(session_meta::GeneratorSettings);
        QVERIFY(gs);
        QCOMPARE((*gs)["model"].get<std::string>(), std::string("replay-model"));
        QCOMPARE((*gs)["key_env"].get<std::string>(), std::string(kKeyEnv));
        search.reset();
        QVERIFY(f.store->close().ok());
        QVERIFY(!fileBytes(f.path()).contains("0123456789abcdef"));

        // A reader (the GUI) gets the same from a read-only open.
        auto reader = SessionStore::open(f.path(), true);
        QVERIFY(reader);
        auto again = reader->exchanges(repaired->id);
        QVERIFY(again && again->size() == 1);
        QCOMPARE(again->front().id, behindRepair->front().id);
    }

    void budgetsStopTheSearchCleanly_data()
    {
        QTest::addColumn<qint64>("tokens");
        QTest::addColumn<double>("cost");
        QTest::addColumn<QString>("reason");
        QTest::newRow("tokens") << qint64(4500) << 0.0 << "token budget";
        QTest::newRow("cost") << qint64(0) << 0.005 << "cost budget";
    }

    void budgetsStopTheSearchCleanly()
    {
        if (!haveWorker())
            QSKIP("KERNELFORGE_WORKER is not set (run through ctest)");
        QFETCH(qint64, tokens);
        QFETCH(double, cost);
        QFETCH(QString, reason);
        ScriptedServer replay(Protocol::Anthropic);
        LlmSearch f;
        auto gen = llmGenerator(Protocol::Anthropic, replay.url(), {{"concurrency", 1}});
        SearchSettings s = llmSettings(3, true);
        s.tokenBudget = tokens;
        s.costBudget = cost;
        auto search = f.search(gen, s);
        std::atomic<bool> cancel{false};
        QVERIFY(search->run(cancel));
        QCOMPARE(q(toString(search->stopReason())), reason);
        QVERIFY(q(search->stopDetail()).contains("budget"));
        // 1500 tokens (0.002) an answer: the third answer crosses either budget, in round 1.
        auto exchanges = f.store->allExchanges();
        QVERIFY(exchanges);
        QCOMPARE(int(exchanges->size()), 3);
        const auto rounds = f.nodes(NodeKind::Round);
        QCOMPARE(int(rounds.size()), 1);
        QCOMPARE(q(rounds[0].status), QString("stopped"));
        for (const auto &c : f.nodes(NodeKind::Candidate)) {
            QCOMPARE(q(c.status), QString("queued"));
            QCOMPARE(q(c.reason), reason);
        }
        auto events = f.store->events();
        QVERIFY(events && !events->empty());
        QCOMPARE(q(events->back().kind), QString("stopped"));
        QCOMPARE(q(events->back().data["reason"].get<std::string>()), reason);

        // A resumed session counts what it already spent: it stops before asking anything.
        search.reset();
        auto resumed = Search::resume(*f.store, gen, *f.pool, *f.compiler);
        QVERIFY(resumed);
        QVERIFY((*resumed)->run(cancel));
        QCOMPARE(q(toString((*resumed)->stopReason())), reason);
        QCOMPARE(int(f.store->allExchanges()->size()), 3);
    }

    void rejectedKeyStopsWithAClearError()
    {
        if (!haveWorker())
            QSKIP("KERNELFORGE_WORKER is not set (run through ctest)");
        ReplayServer server([](const ReplayRequest &) {
            ReplayReply r;
            r.status = 401;
            r.body = dataFile("openai_401.json");
            return r;
        });
        LlmSearch f;
        auto search = f.search(llmGenerator(Protocol::OpenAI, server.url()), llmSettings(2, true));
        std::atomic<bool> cancel{false};
        Status s = search->run(cancel);
        QVERIFY(!s);
        QVERIFY2(q(s.error().message).contains("key rejected by 127.0.0.1:"), qPrintable(q(s.error().message)));
        QVERIFY(!q(s.error().text()).contains("0123456789abcdef"));
        QCOMPARE(q(toString(search->stopReason())), QString("error"));
        QVERIFY(f.nodes(NodeKind::Round).empty());
        auto exchanges = f.store->allExchanges();
        QVERIFY(exchanges && exchanges->size() == 1);
        QCOMPARE(exchanges->front().httpStatus, 401);
        QCOMPARE(exchanges->front().round, 1);
        search.reset();
        QVERIFY(f.store->close().ok());
        QVERIFY(!fileBytes(f.path()).contains("0123456789abcdef"));
    }

    void cliRunsTheAnthropicLoop()
    {
        if (!haveWorker() || qEnvironmentVariableIsEmpty("KERNELFORGE_CLI"))
            QSKIP("KERNELFORGE_WORKER or KERNELFORGE_CLI is not set (run through ctest)");
        ScriptedServer replay(Protocol::Anthropic);
        QTemporaryDir dir;
        const QString session = dir.filePath("cli.kfsession");
        QProcess p;
        p.start(qEnvironmentVariable("KERNELFORGE_CLI"),
                {"search",
                 "softmax",
                 "--variant",
                 "small",
                 "--session",
                 session,
                 "--generator",
                 "anthropic",
                 "--base-url",
                 q(replay.url()),
                 "--model",
                 "replay-model",
                 "--key-env",
                 kKeyEnv,
                 "--thinking-budget",
                 "2048",
                 "--max-tokens",
                 "8192",
                 "--prices",
                 KF_SOURCE_DIR "/tests/data/llm/prices.json",
                 "--compile-only",
                 "--rounds",
                 "1",
                 "--ideas",
                 "2",
                 "--impls",
                 "2",
                 "--compilers",
                 "2"});
        QVERIFY(p.waitForFinished(300000));
        const QString out = p.readAllStandardOutput(), err = p.readAllStandardError();
        QVERIFY2(p.exitCode() == 0, qPrintable(out + err));
        QVERIFY2(out.contains("with the anthropic generator"), qPrintable(out));
        QVERIFY2(out.contains("needs gpu"), qPrintable(out));
        QVERIFY2(out.contains("implement request failed: the answer has no ```cuda code block"), qPrintable(out));
        QVERIFY(!(out + err).contains("0123456789abcdef"));
        QVERIFY2(out.contains("language model: 6 requests (1 unusable), 6000 prompt + 3000 completion tokens"),
                 qPrintable(out));
        const auto requests = replay.server().requests();
        QVERIFY(!requests.empty());
        auto body = nlohmann::json::parse(requests.front().body);
        QCOMPARE(body["thinking"]["budget_tokens"].get<int>(), 2048);
        QCOMPARE(body["max_tokens"].get<int>(), 8192);

        QProcess list;
        list.start(qEnvironmentVariable("KERNELFORGE_CLI"), {"exchanges", session});
        QVERIFY(list.waitForFinished(60000));
        const QString listed = list.readAllStandardOutput();
        QCOMPARE(list.exitCode(), 0);
        QCOMPARE(listed.count("exchange "), int(requests.size()));
        QVERIFY(listed.contains("1000 + 500 tokens"));

        // The prompt and the answer behind the first idea.
        auto store = SessionStore::open(session.toStdString(), true);
        QVERIFY(store);
        std::int64_t idea = 0;
        const auto nodes = store->allNodes();
        QVERIFY(nodes);
        for (const auto &n : *nodes)
            if (n.kind == NodeKind::Idea && !idea)
                idea = n.id;
        QProcess one;
        one.start(qEnvironmentVariable("KERNELFORGE_CLI"), {"exchanges", session, QString::number(idea)});
        QVERIFY(one.waitForFinished(60000));
        const QString shown = one.readAllStandardOutput();
        QVERIFY2(shown.contains("--- prompt ---") && shown.contains("new optimization ideas"), qPrintable(shown));
        QVERIFY(shown.contains("Block per row"));
    }

    // The newer options reach the request, and a setting that may not do what was meant is said.
    void cliNewOptionsAndWarnings()
    {
        if (qEnvironmentVariableIsEmpty("KERNELFORGE_CLI"))
            QSKIP("KERNELFORGE_CLI is not set (run through ctest)");
        ReplayServer server([](const ReplayRequest &r) {
            ReplayReply reply;
            reply.body = r.path == "/v1/models" ? dataFile("models.json") : std::string("{}");
            return reply;
        });
        QProcess p;
        p.start(qEnvironmentVariable("KERNELFORGE_CLI"),
                {"models", "--generator", "openai", "--base-url", q(server.url() + "/v1"), "--model", "m",
                 "--temperature", "0.5", "--reasoning-effort", "xhigh", "--stream", "off", "--max-tokens-field",
                 "max_completion_tokens", "--connect-timeout", "2", "--max-time", "60"});
        QVERIFY(p.waitForFinished(60000));
        const QString out = p.readAllStandardOutput(), err = p.readAllStandardError();
        QVERIFY2(p.exitCode() == 0, qPrintable(out + err));
        QVERIFY(out.contains("replay-large"));
        QVERIFY2(err.contains("kernelforge-cli: warning: temperature 0.5 is sent with reasoning_effort xhigh"),
                 qPrintable(err));
        QVERIFY(!server.requests().front().headers.count("authorization")); // no key named for this server

        // "default" drops a stored value: a session stored with a temperature resumes without one.
        QProcess cleared;
        cleared.start(qEnvironmentVariable("KERNELFORGE_CLI"),
                      {"models", "--generator", "openai", "--base-url", q(server.url() + "/v1"), "--model", "m",
                       "--temperature", "default", "--reasoning-effort", "xhigh"});
        QVERIFY(cleared.waitForFinished(60000));
        QCOMPARE(cleared.exitCode(), 0);
        QVERIFY(!QString(cleared.readAllStandardError()).contains("warning"));
    }

    void cliSettingsErrors_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("no model") << QStringList{"--generator", "openai", "--base-url", "http://127.0.0.1:1/v1"}
                                  << "generator setting model is needed";
        QTest::newRow("temperature") << QStringList{"--generator",   "openai",
                                                    "--model",       "m",
                                                    "--base-url",    "http://127.0.0.1:1/v1",
                                                    "--temperature", "hot"}
                                     << "--temperature needs a number";
        QTest::newRow("base url") << QStringList{"--generator", "anthropic",  "--model",
                                                 "m",           "--base-url", "localhost:8000"}
                                  << "base_url must start with http:// or https://";
        QTest::newRow("thinking") << QStringList{"--generator", "anthropic", "--model",           "m",
                                                 "--key-env",   kKeyEnv,     "--thinking-budget", "500"}
                                  << "at least 1024 tokens";
        QTest::newRow("token budget") << QStringList{"--token-budget", "lots"} << "--token-budget needs a number";
        QTest::newRow("stream") << QStringList{"--generator",           "openai",   "--model", "m", "--base-url",
                                               "http://127.0.0.1:1/v1", "--stream", "maybe"}
                                << "--stream is on or off, not 'maybe'";
        QTest::newRow("thinking form") << QStringList{"--generator", "anthropic", "--model",    "m",
                                                      "--key-env",   kKeyEnv,     "--thinking", "deep"}
                                       << "generator setting thinking must be adaptive, enabled";
        QTest::newRow("effort") << QStringList{"--generator", "anthropic",          "--model", "m", "--key-env",
                                               kKeyEnv,       "--reasoning-effort", "minimal"}
                                << "output_config.effort, which takes low, medium, high, xhigh, max";
        // The README's OpenAI export must not follow the search to another server.
        QTest::newRow("default key elsewhere")
            << QStringList{"--generator",           "openai",    "--model",       "m", "--base-url",
                           "http://127.0.0.1:1/v1", "--key-env", "OPENAI_API_KEY"}
            << "key_env names OPENAI_API_KEY, the key for https://api.openai.com";
        QTest::newRow("key in clear text")
            << QStringList{"--generator", "openai", "--model", "m", "--base-url", "http://192.0.2.10:8000/v1",
                           "--key-env",   kKeyEnv}
            << "would send a key in clear text over plain HTTP to 192.0.2.10:8000";
    }

    // Bad generator settings are refused before a session file is made.
    void cliSettingsErrors()
    {
        if (qEnvironmentVariableIsEmpty("KERNELFORGE_CLI"))
            QSKIP("KERNELFORGE_CLI is not set (run through ctest)");
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const QString session = dir.filePath("bad.kfsession");
        QProcess p;
        p.start(qEnvironmentVariable("KERNELFORGE_CLI"),
                QStringList{"search", "softmax", "--variant", "small", "--session", session} + args);
        QVERIFY(p.waitForFinished(60000));
        const QString err = p.readAllStandardError();
        QCOMPARE(p.exitCode(), 2);
        QVERIFY2(err.contains(message), qPrintable(err));
        QVERIFY(!QFile::exists(session));
    }

    // Sessions written before exchanges existed (format 1: the examples shipped in resources/)
    // read as they are, with no exchanges, and become the current format on a writable open.
    void formatOneSessionsStayReadable()
    {
        QTemporaryDir dir;
        const QString copy = dir.filePath("old.kfsession");
        QVERIFY(QFile::copy(KF_SOURCE_DIR "/resources/examples/softmax.kfsession", copy));
        QFile(copy).setPermissions(QFile::ReadOwner | QFile::WriteOwner);
        {
            auto ro = SessionStore::open(KF_SOURCE_DIR "/resources/examples/softmax.kfsession", true);
            QVERIFY2(ro, ro ? "" : qPrintable(q(ro.error().text())));
            QCOMPARE(ro->formatVersion(), 1);
            auto none = ro->allExchanges();
            QVERIFY(none && none->empty());
            auto root = ro->root();
            QVERIFY(root && *root);
            QVERIFY(ro->exchanges((*root)->id) && ro->exchanges((*root)->id)->empty());
        }
        std::int64_t node = 0;
        {
            auto rw = SessionStore::open(copy.toStdString());
            QVERIFY2(rw, rw ? "" : qPrintable(q(rw.error().text())));
            QCOMPARE(rw->formatVersion(), kSessionFormatVersion);
            node = (*rw->root())->id;
            ExchangeRecord e;
            e.round = 1;
            e.purpose = "ideas";
            e.prompt = "propose";
            e.answer = "[]";
            e.cost = 0.25;
            e.latencyMs = 12.5;
            e.stopReason = "max_tokens";
            e.ending = "truncated";
            auto id = rw->addExchange(e, {node});
            QVERIFY(id);
            QVERIFY(rw->linkExchange(*id, node)); // twice is harmless
            QVERIFY(!rw->linkExchange(*id, 999999));
            QVERIFY(rw->close());
        }
        auto ro = SessionStore::open(copy.toStdString(), true);
        QVERIFY(ro);
        QCOMPARE(ro->formatVersion(), kSessionFormatVersion);
        auto back = ro->exchanges(node);
        QVERIFY(back && back->size() == 1);
        QCOMPARE(back->front().stopReason, std::string("max_tokens"));
        QCOMPARE(back->front().ending, std::string("truncated"));
        QCOMPARE(back->front().nodes, std::vector<std::int64_t>{node});
        QCOMPARE(back->front().cost, 0.25);
        QCOMPARE(back->front().latencyMs, 12.5);
        QVERIFY(!ro->exchange(back->front().id + 1));
        auto t = readTrajectory(*ro); // the old tree reads as before
        QVERIFY(t && !t->rows.empty());
    }
};

QTEST_GUILESS_MAIN(TestLlmSearch)
#include "test_llm_search.moc"
