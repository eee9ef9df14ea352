// The LLM generators against a replay server on 127.0.0.1 that speaks each protocol: answers
// as models write them (bare JSON, JSON in prose, code blocks, no code, cut off, refused), what
// each protocol is sent (thinking, effort, limits), and the ways a server fails (401, 429 with
// Retry-After, 500, a hang, a dropped connection, no server at all). Each case must end as
// docs/llm.md says. Transport (streams, retries, time-outs) is test_llm_transport, keys test_llm_keys.
#include "gen/llm/parse.h"
#include "gen/llm/prompts.h"
#include "llm_support.h"

#include <QtTest>

#include <chrono>
#include <thread>

using namespace kf;
using namespace kf::test;
using llm::Protocol;
Q_DECLARE_METATYPE(kf::llm::Protocol)

namespace {

QString q(const std::string &s) { return QString::fromStdString(s); }

} // namespace

class TestLlm : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { qputenv(kKeyEnv, kTestKey); }

    void ideasAsModelsWriteThem_data()
    {
        QTest::addColumn<Protocol>("protocol");
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("count");
        QTest::addColumn<QString>("error");
        for (Protocol p : {Protocol::OpenAI, Protocol::Anthropic}) {
            const char *n = p == Protocol::OpenAI ? "openai" : "anthropic";
            QTest::addRow("%s bare JSON", n) << p << "ideas_round1.md" << 2 << "";
            QTest::addRow("%s fenced in prose", n) << p << "ideas_round2_prose.md" << 2 << "";
            QTest::addRow("%s inline in prose", n) << p << "ideas_inline_prose.md" << 1 << "";
            QTest::addRow("%s no JSON", n) << p << "ideas_none.md" << 0 << "holds no JSON list of ideas";
        }
    }

    void ideasAsModelsWriteThem()
    {
        QFETCH(Protocol, protocol);
        QFETCH(QString, file);
        QFETCH(int, count);
        QFETCH(QString, error);
        const std::string text = dataFile(file.toStdString());
        QVERIFY(!text.empty());
        ReplayServer server([&](const ReplayRequest &) { return answer(protocol, text); });
        QVERIFY(server.listening());
        auto g = llmGenerator(protocol, server.url());
        QVERIFY(g);
        Context c;
        Usage usage;
        auto ideas = g->proposeIdeas(c.ctx, 4, &usage);
        QCOMPARE(int(c.exchanges.size()), 1);
        const Exchange &e = c.exchanges.front();
        QCOMPARE(e.purpose, std::string("ideas"));
        QCOMPARE(e.answer, text); // the raw answer is kept whatever happens to it
        QCOMPARE(e.usage.promptTokens, std::int64_t(1000));
        QCOMPARE(e.usage.completionTokens, std::int64_t(500));
        QVERIFY(qAbs(e.usage.cost - 0.002) < 1e-12); // 1000 x 1 + 500 x 2 per million
        QCOMPARE(usage.promptTokens, std::int64_t(1000));
        QVERIFY(e.prompt.find("def forward") != std::string::npos); // the problem's source is in the prompt
        if (!error.isEmpty()) {
            QVERIFY(!ideas);
            QVERIFY2(q(ideas.error().message).contains(error), qPrintable(q(ideas.error().message)));
            QVERIFY(q(e.error).contains(error));
            return;
        }
        QVERIFY2(ideas, ideas ? "" : qPrintable(q(ideas.error().text())));
        QCOMPARE(int(ideas->size()), count);
        QVERIFY(e.error.empty());
        for (const Idea &i : *ideas) {
            QVERIFY(!i.title.empty() && !i.id.empty() && !i.text.empty());
            QCOMPARE(i.exchange, std::int64_t(1));
        }
        if (file == "ideas_round2_prose.md") // two wordings of one idea get one id
            QCOMPARE((*ideas)[1].id, std::string("block-per-row"));
        if (protocol == Protocol::Anthropic)
            QVERIFY(q(e.reasoning).contains("memory traffic"));
    }

    void implementationsAsModelsWriteThem_data()
    {
        QTest::addColumn<Protocol>("protocol");
        QTest::addColumn<QString>("file");
        QTest::addColumn<bool>("truncated");
        QTest::addColumn<QString>("error");
        for (Protocol p : {Protocol::OpenAI, Protocol::Anthropic}) {
            const char *n = p == Protocol::OpenAI ? "openai" : "anthropic";
            QTest::addRow("%s kernel", n) << p << "kernel_block_row.md" << false << "";
            QTest::addRow("%s no code block", n) << p << "no_code.md" << false << "no ```cuda code block";
            QTest::addRow("%s cut off", n) << p << "truncated.md" << true << "cut off at the token limit";
        }
    }

    void implementationsAsModelsWriteThem()
    {
        QFETCH(Protocol, protocol);
        QFETCH(QString, file);
        QFETCH(bool, truncated);
        QFETCH(QString, error);
        const std::string text = dataFile(file.toStdString());
        ReplayServer server([&](const ReplayRequest &) { return answer(protocol, text, truncated); });
        auto g = llmGenerator(protocol, server.url());
        QVERIFY(g);
        Context c;
        auto drafts = g->implement(c.ctx, someIdea(), 2);
        QCOMPARE(int(c.exchanges.size()), 2);
        for (const Exchange &e : c.exchanges) {
            QCOMPARE(e.node, std::int64_t(7)); // made for the idea's node
            QCOMPARE(e.purpose, std::string("implement"));
            QCOMPARE(e.answer, text);
        }
        if (!error.isEmpty()) {
            QVERIFY(!drafts);
            QVERIFY2(q(drafts.error().message).contains(error), qPrintable(q(drafts.error().message)));
            QVERIFY(q(c.exchanges[0].error).contains(error));
            return;
        }
        QVERIFY2(drafts, drafts ? "" : qPrintable(q(drafts.error().text())));
        QCOMPARE(int(drafts->size()), 2);
        QVERIFY((*drafts)[0].source.find("@launch softmax_block_row") != std::string::npos);
        QVERIFY((*drafts)[0].source.find("This kernel gives") == std::string::npos); // prose stays out
        QVERIFY((*drafts)[0].exchange > 0 && (*drafts)[1].exchange > 0);
        QVERIFY((*drafts)[0].exchange != (*drafts)[1].exchange);
        // Variants are asked for by number, so the model can make them differ.
        const auto requests = server.requests();
        QCOMPARE(int(requests.size()), 2);
        QVERIFY(userMessage(requests[0]).find("of 2") != std::string::npos);
    }

    void repairSeesTheFailure()
    {
        const std::string text = dataFile("kernel_repaired.md");
        ReplayServer server([&](const ReplayRequest &) { return answer(Protocol::OpenAI, text); });
        auto g = llmGenerator(Protocol::OpenAI, server.url());
        Context c;
        KernelRecord failed;
        failed.node = 12;
        failed.source = "// @launch k grid(1) block(1) args(x, out)\nextern \"C\" __global__ void k() { rowMax(); }\n";
        failed.result.verdict = Verdict::CompileError;
        failed.result.reason = "line 2: identifier \"rowMax\" is undefined";
        failed.result.compileLog = "candidate.cu(2): error: identifier \"rowMax\" is undefined";
        auto repaired = g->repair(c.ctx, someIdea(), failed);
        QVERIFY(repaired && *repaired);
        QVERIFY((*repaired)->source.find("blockReduce") != std::string::npos);
        QCOMPARE(int(c.exchanges.size()), 1);
        QCOMPARE(c.exchanges[0].node, std::int64_t(12));
        QCOMPARE(c.exchanges[0].purpose, std::string("repair"));
        const std::string prompt = userMessage(server.requests().front());
        QVERIFY(prompt.find("identifier \"rowMax\" is undefined") != std::string::npos); // the compiler log
        QVERIFY(prompt.find("rowMax();") != std::string::npos);                          // the source
    }

    void requestsFollowEachProtocol()
    {
        ReplayServer server([&](const ReplayRequest &r) {
            return answer(r.path == "/v1/messages" ? Protocol::Anthropic : Protocol::OpenAI,
                          dataFile("ideas_round1.md"));
        });
        {
            auto g = llmGenerator(Protocol::OpenAI, server.url(),
                                  {{"temperature", 0.7}, {"max_tokens", 4000}, {"reasoning_effort", "high"}});
            QVERIFY(g);
            Context c;
            QVERIFY(g->proposeIdeas(c.ctx, 3));
        }
        {
            auto g = llmGenerator(Protocol::Anthropic, server.url(), {{"max_tokens", 8000}, {"thinking_budget", 2048}});
            QVERIFY(g);
            Context c;
            QVERIFY(g->proposeIdeas(c.ctx, 3));
        }
        const auto requests = server.requests();
        QCOMPARE(int(requests.size()), 2);

        const ReplayRequest &o = requests[0];
        QCOMPARE(o.method, std::string("POST"));
        QCOMPARE(o.path, std::string("/v1/chat/completions"));
        QCOMPARE(o.headers.at("authorization"), std::string("Bearer ") + kTestKey);
        auto ob = nlohmann::json::parse(o.body);
        QCOMPARE(ob["model"].get<std::string>(), std::string("replay-model"));
        QCOMPARE(ob["messages"][0]["role"].get<std::string>(), std::string("system"));
        QCOMPARE(ob["messages"][1]["role"].get<std::string>(), std::string("user"));
        QCOMPARE(ob["max_tokens"].get<int>(), 4000); // not api.openai.com: the field every server takes
        QVERIFY(!ob.contains("max_completion_tokens"));
        QCOMPARE(ob["temperature"].get<double>(), 0.7);
        QCOMPARE(ob["reasoning_effort"].get<std::string>(), std::string("high"));
        QCOMPARE(ob["stream"].get<bool>(), true); // streamed by default, with the token counts at the end
        QCOMPARE(ob["stream_options"]["include_usage"].get<bool>(), true);
        QVERIFY(o.body.find(kTestKey) == std::string::npos);

        const ReplayRequest &a = requests[1];
        QCOMPARE(a.path, std::string("/v1/messages"));
        QCOMPARE(a.headers.at("x-api-key"), std::string(kTestKey));
        QCOMPARE(a.headers.at("anthropic-version"), std::string("2023-06-01"));
        QVERIFY(!a.headers.count("authorization"));
        auto ab = nlohmann::json::parse(a.body);
        QVERIFY(ab["system"].is_string() && !ab["system"].get<std::string>().empty());
        QCOMPARE(int(ab["messages"].size()), 1);
        QCOMPARE(ab["max_tokens"].get<int>(), 8000);
        QCOMPARE(ab["thinking"]["type"].get<std::string>(), std::string("enabled")); // the budget form
        QCOMPARE(ab["thinking"]["budget_tokens"].get<int>(), 2048);
        QVERIFY(!ab.contains("temperature"));
        QVERIFY(!ab.contains("output_config"));
        QCOMPARE(ab["stream"].get<bool>(), true);
    }

    void serverFailures_data()
    {
        QTest::addColumn<Protocol>("protocol");
        QTest::addColumn<QString>("scenario");
        QTest::addColumn<QString>("expected");
        QTest::addColumn<int>("attempts");
        QTest::addRow("openai 401") << Protocol::OpenAI << "401"
                                    << "key rejected by 127.0.0.1:" << 1;
        QTest::addRow("anthropic 401") << Protocol::Anthropic << "401"
                                       << "key rejected by 127.0.0.1:" << 1;
        QTest::addRow("openai 500") << Protocol::OpenAI << "500"
                                    << "failed (HTTP 500: The server had an error" << 3;
        QTest::addRow("anthropic 529") << Protocol::Anthropic << "529"
                                       << "failed (HTTP 529" << 3;
        QTest::addRow("openai hang") << Protocol::OpenAI << "hang"
                                     << "no answer from 127.0.0.1:" << 1;
        QTest::addRow("anthropic drop") << Protocol::Anthropic << "drop"
                                        << "closed the connection before the answer" << 3;
        QTest::addRow("openai half an answer") << Protocol::OpenAI << "partial"
                                               << "closed the connection before the answer" << 3;
        // A refused connection is retried, as the providers' SDKs retry connection errors.
        QTest::addRow("openai no server") << Protocol::OpenAI << "refused"
                                          << "no server at http://127.0.0.1:" << 3;
        QTest::addRow("anthropic not json") << Protocol::Anthropic << "garbage"
                                            << "is not a message" << 1;
        QTest::addRow("openai 501") << Protocol::OpenAI << "501"
                                    << "failed (HTTP 501" << 3;
    }

    void serverFailures()
    {
        QFETCH(Protocol, protocol);
        QFETCH(QString, scenario);
        QFETCH(QString, expected);
        QFETCH(int, attempts);
        ReplayServer server([&](const ReplayRequest &) {
            ReplayReply r;
            if (scenario == "401") {
                r.status = 401;
                r.body = dataFile(protocol == Protocol::OpenAI ? "openai_401.json" : "anthropic_401.json");
            } else if (scenario == "500" || scenario == "529" || scenario == "501") {
                r.status = scenario.toInt();
                r.body = dataFile("server_error_500.json");
            } else if (scenario == "hang") {
                r.action = ReplayReply::Action::Hang;
            } else if (scenario == "drop") {
                r.action = ReplayReply::Action::Drop;
            } else if (scenario == "partial") {
                r.action = ReplayReply::Action::PartialBody;
                r.body = openaiAnswer(dataFile("ideas_round1.md"));
            } else if (scenario == "garbage") {
                r.body = "<html>proxy error</html>";
            }
            return r;
        });
        const std::string url =
            scenario == "refused" ? "http://127.0.0.1:" + std::to_string(closedPort()) : server.url();
        auto g = llmGenerator(protocol, url, {{"timeout_s", 1}});
        QVERIFY(g);
        Context c;
        const auto started = std::chrono::steady_clock::now();
        auto ideas = g->proposeIdeas(c.ctx, 2);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        QVERIFY(!ideas);
        const QString message = q(ideas.error().message);
        QVERIFY2(message.contains(expected), qPrintable(message));
        QCOMPARE(toString(ideas.error().code), std::string("llm"));
        QCOMPARE(int(c.exchanges.size()), 1);
        const Exchange &e = c.exchanges.front();
        QCOMPARE(e.attempts, attempts);
        QCOMPARE(q(e.error), message);
        if (attempts > 1)
            QVERIFY2(message.contains(QString("after %1 attempts").arg(attempts)), qPrintable(message));
        if (scenario == "hang")
            QVERIFY2(seconds < 5, "the time-out ends a hung request");
        // The key never reaches a message or what the session keeps, even when the server echoes it.
        for (const std::string &s : {ideas.error().text(), e.response, e.answer, e.request, e.error})
            QVERIFY2(s.find("0123456789abcdef") == std::string::npos, s.c_str());
        if (scenario == "401" && protocol == Protocol::OpenAI)
            QVERIFY(e.response.find("Incorrect API key provided: ***") != std::string::npos);
    }

    void rateLimitHonoursRetryAfter()
    {
        std::atomic<int> calls{0};
        ReplayServer server([&](const ReplayRequest &) {
            if (calls++ == 0) {
                ReplayReply r;
                r.status = 429;
                r.headers = {{"Retry-After", "1"}};
                r.body = dataFile("rate_limited_429.json");
                return r;
            }
            return answer(Protocol::OpenAI, dataFile("ideas_round1.md"));
        });
        auto g = llmGenerator(Protocol::OpenAI, server.url());
        Context c;
        const auto started = std::chrono::steady_clock::now();
        auto ideas = g->proposeIdeas(c.ctx, 2);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        QVERIFY(ideas);
        QCOMPARE(int(ideas->size()), 2);
        QCOMPARE(c.exchanges.front().attempts, 2);
        QVERIFY2(seconds >= 0.95, qPrintable(QString::number(seconds))); // backoff is 0.05 s: Retry-After won
        QVERIFY(c.exchanges.front().latencyMs >= 950);
    }

    void requestsRunConcurrentlyWithinTheLimit()
    {
        ReplayServer server([&](const ReplayRequest &) {
            ReplayReply r = answer(Protocol::OpenAI, dataFile("kernel_warp_row.md"));
            r.delayMs = 300;
            return r;
        });
        auto g = llmGenerator(Protocol::OpenAI, server.url(), {{"concurrency", 3}});
        Context c;
        Idea a = someIdea(5), b = someIdea(6);
        b.title = "Warp per row";
        const auto started = std::chrono::steady_clock::now();
        auto results = g->implementAll(c.ctx, {a, b}, 3);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        QCOMPARE(int(results.size()), 2);
        QVERIFY(results[0] && results[1]);
        QCOMPARE(int(results[0]->size()), 3);
        QCOMPARE(int(results[1]->size()), 3);
        QCOMPARE(server.maxConcurrent(), 3);
        QVERIFY2(seconds < 1.5, qPrintable(QString::number(seconds))); // 6 x 0.3 s one by one would be 1.8 s
        QCOMPARE(int(c.exchanges.size()), 6);
        int forA = 0;
        for (const Exchange &e : c.exchanges)
            forA += e.node == 5;
        QCOMPARE(forA, 3);
    }

    void cancelAbortsRequestsInFlight()
    {
        ReplayServer server([&](const ReplayRequest &) {
            ReplayReply r;
            r.action = ReplayReply::Action::Hang;
            return r;
        });
        auto g = llmGenerator(Protocol::Anthropic, server.url(), {{"timeout_s", 60}});
        Context c;
        std::thread canceller([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            c.cancel = true;
        });
        const auto started = std::chrono::steady_clock::now();
        auto results = g->implementAll(c.ctx, {someIdea()}, 2);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        canceller.join();
        QVERIFY2(seconds < 2, qPrintable(QString::number(seconds)));
        QVERIFY(!results[0]);
        QCOMPARE(toString(results[0].error().code), std::string("cancelled"));
        QCOMPARE(server.requests().size(), std::size_t(2)); // both were in flight
    }

    void modelsList()
    {
        ReplayServer server([&](const ReplayRequest &r) {
            ReplayReply reply;
            if (r.method == "GET" && (r.path == "/v1/models"))
                reply.body = dataFile("models.json");
            else
                reply.status = 404;
            return reply;
        });
        for (Protocol p : {Protocol::OpenAI, Protocol::Anthropic}) {
            auto g = llmGenerator(p, server.url());
            auto models = g->listModels();
            QVERIFY2(models, models ? "" : qPrintable(q(models.error().text())));
            QCOMPARE(*models, (std::vector<std::string>{"replay-model", "replay-large"}));
        }
        auto g = llmGenerator(Protocol::OpenAI, server.url() + "/nowhere");
        auto none = g->listModels();
        QVERIFY(!none);
        QVERIFY2(q(none.error().message).contains("not found on 127.0.0.1"), qPrintable(q(none.error().message)));
    }

    void settingsAreCheckedAndKeptWithoutTheKey()
    {
        using llm::configFromJson;
        QVERIFY(!configFromJson(Protocol::OpenAI, {{"base_url", "http://x"}}));
        QVERIFY(q(configFromJson(Protocol::OpenAI, {{"model", "m"}, {"base_url", "localhost:11434"}}).error().message)
                    .contains("base_url"));
        QVERIFY(q(configFromJson(Protocol::OpenAI, {{"model", "m"}, {"temprature", 1}}).error().message)
                    .contains("temprature"));
        QVERIFY(q(configFromJson(Protocol::Anthropic, {{"model", "m"}, {"max_tokens", 4000}, {"thinking_budget", 8000}})
                      .error()
                      .message)
                    .contains("thinking_budget"));
        auto c =
            configFromJson(Protocol::Anthropic, {{"model", "claude-x"}, {"api_key", "sk-ant-secret-from-settings"}});
        QVERIFY(c);
        QCOMPARE(c->baseUrl, std::string("https://api.anthropic.com"));
        QCOMPARE(c->keyEnv, std::string("ANTHROPIC_API_KEY"));
        QCOMPARE(c->maxTokens, 16384); // Anthropic requires max_tokens
        QCOMPARE(c->key(), std::string("sk-ant-secret-from-settings"));
        const std::string kept = llm::toJson(*c).dump();
        QVERIFY(kept.find("secret") == std::string::npos);
        auto again = configFromJson(Protocol::Anthropic, llm::toJson(*c));
        QVERIFY(again);
        QCOMPARE(again->model, std::string("claude-x"));

        QCOMPARE(llm::scrub("key sk-test-replay-0123456789abcdef here", kTestKey), std::string("key *** here"));
        QCOMPARE(llm::scrub("shown as sk-test-...89abcdef", kTestKey), std::string("shown as ***...***"));
    }

    void hostedApisNeedAKey()
    {
        qunsetenv("KF_TEST_NO_SUCH_KEY");
        for (const char *url : {"https://api.openai.com/v1", "https://api.anthropic.com"}) {
            const Protocol p = QByteArray(url).contains("anthropic") ? Protocol::Anthropic : Protocol::OpenAI;
            auto g =
                llm::LlmGenerator::make(p, {{"model", "m"}, {"base_url", url}, {"key_env", "KF_TEST_NO_SUCH_KEY"}});
            QVERIFY(!g);
            QVERIFY2(q(g.error().message).contains("KF_TEST_NO_SUCH_KEY"), qPrintable(q(g.error().message)));
            QVERIFY(q(g.error().message).contains("no API key for api."));
        }
        // A local server needs none, and none is sent.
        ReplayServer server(
            [&](const ReplayRequest &) { return answer(Protocol::OpenAI, dataFile("ideas_round1.md")); });
        auto local = llmGenerator(Protocol::OpenAI, server.url(), {{"key_env", "KF_TEST_NO_SUCH_KEY"}});
        QVERIFY(local);
        Context c;
        QVERIFY(local->proposeIdeas(c.ctx, 2));
        QVERIFY(!server.requests().front().headers.count("authorization"));
    }

    void pricesByLongestPrefix()
    {
        auto t = llm::parsePriceTable(R"({"models": {"gpt-4.1": {"input": 2, "output": 8},
                                                     "gpt-4.1-mini": {"input": 0.4, "output": 1.6}}})",
                                      "test");
        QVERIFY(t);
        Usage u{1'000'000, 1'000'000, 0, 0};
        QCOMPARE(t->cost("gpt-4.1-2025-04-14", u), 10.0);
        QCOMPARE(t->cost("gpt-4.1-mini-2025-04-14", u), 2.0);
        QCOMPARE(t->cost("llama3.1:8b", u), 0.0);
        QVERIFY(!llm::parsePriceTable(R"({"models": {"x": {"input": "cheap"}}})", "test"));
        auto shipped = llm::loadPriceTable();
        QVERIFY2(shipped, shipped ? "" : qPrintable(q(shipped.error().text())));
        QVERIFY(shipped->find("claude-sonnet-4-5-20250929"));
    }

    void promptsAreFilledFromTheContext()
    {
        QVERIFY(!llm::fillTemplate("a {{MISSING}} b", {}, "t.md"));
        QVERIFY(q(llm::fillTemplate("a {{MISSING}} b", {}, "t.md").error().text()).contains("{{MISSING}}"));
        QCOMPARE(*llm::fillTemplate("a {{X}} b", {{"X", "1"}}, "t.md"), std::string("a 1 b"));

        Context c;
        IdeaRecord tried;
        tried.round = 1;
        tried.title = "Warp per row";
        tried.failed = 2;
        tried.failure = "compile error: line 3: identifier \"x\" is undefined";
        c.ctx.tried.push_back(tried);
        const std::string facts = llm::problemFacts(c.ctx);
        QVERIFY(facts.find("torch.softmax") != std::string::npos);
        QVERIFY(facts.find("input `x`: float32 [8, 256]") != std::string::npos);
        // The small variant's bytes, not the 2.15 GB the file declares for the full size.
        QVERIFY2(facts.find("16.4 KB moved") != std::string::npos, facts.c_str());
        const std::string ideas = llm::triedIdeas(c.ctx);
        QVERIFY(ideas.find("Warp per row") != std::string::npos);
        QVERIFY(ideas.find("identifier \"x\" is undefined") != std::string::npos);
        QVERIFY(llm::gpuFacts(c.ctx).find("No GPU") != std::string::npos);

        // The shipped templates fill without a missing placeholder, before any request is made.
        auto g = llmGenerator(Protocol::OpenAI, "http://127.0.0.1:" + std::to_string(closedPort()));
        QVERIFY(g);
        Status ok = g->supports(c.ctx);
        QVERIFY2(ok, ok ? "" : qPrintable(q(ok.error().text())));
        QTemporaryDir dir;
        QFile broken(dir.filePath("ideas.md"));
        QVERIFY(broken.open(QIODevice::WriteOnly));
        broken.write("Propose {{COUNT}} ideas for {{PROBLEMS}}.\n");
        broken.close();
        auto edited = llmGenerator(Protocol::OpenAI, "http://127.0.0.1:1", {{"prompts", dir.path().toStdString()}});
        Status refused = edited->supports(c.ctx);
        QVERIFY(!refused);
        QVERIFY2(q(refused.error().text()).contains("ideas.md: the placeholder {{PROBLEMS}} has no value"),
                 qPrintable(q(refused.error().text())));
    }

    void answerParsing()
    {
        using llm::extractCandidate;
        QVERIFY(extractCandidate(dataFile("kernel_vec4.md"), false));
        // A model that answers with the bare file is taken at its word.
        const std::string bare = "// @launch k grid(1) block(32) args(x, out)\nextern \"C\" __global__ void k() {}\n";
        QCOMPARE(*extractCandidate(bare, false), bare);
        auto noLaunch = extractCandidate("```cuda\n__global__ void k() {}\n```\n", false);
        QVERIFY(!noLaunch);
        QVERIFY(q(noLaunch.error().message).contains("@launch"));
        // A closing fence left off by a model that finished normally is forgiven.
        QVERIFY(extractCandidate("```cuda\n" + bare, false));
        auto cut = extractCandidate("```cuda\n" + bare, true);
        QVERIFY(!cut);
        QVERIFY(q(cut.error().message).contains("cut off"));
        auto truncatedIdeas = llm::parseIdeas("{\"ideas\": [{\"title\": \"A\", \"descr", true);
        QVERIFY(!truncatedIdeas);
        QVERIFY(q(truncatedIdeas.error().message).contains("max_tokens"));
        const std::string list = R"([{"title": "A", "builds_on": "#12"}, {"title": "B", "builds_on": "reference"}])";
        auto ideas = llm::parseIdeas(list, false);
        QVERIFY(ideas);
        QCOMPARE((*ideas)[0].buildsOn, std::int64_t(12));
        QCOMPARE((*ideas)[1].buildsOn, std::int64_t(0));
    }

    // An answer cut at a token or context limit is recorded as truncated with its raw text, and
    // an ideas list that was cut is not taken for a complete one.
    void truncatedAnswersAreRecorded_data()
    {
        QTest::addColumn<Protocol>("protocol");
        QTest::addColumn<QString>("stop");
        QTest::addColumn<QString>("file");
        QTest::addColumn<int>("ideas"); // -1: an implementation is asked for
        QTest::addColumn<QString>("error");
        for (Protocol p : {Protocol::OpenAI, Protocol::Anthropic}) {
            const char *n = p == Protocol::OpenAI ? "openai" : "anthropic";
            const char *limit = p == Protocol::OpenAI ? "length" : "max_tokens";
            QTest::addRow("%s list closed, prose cut", n) << p << limit << "ideas_then_cut.md" << 2 << "";
            QTest::addRow("%s list cut", n) << p << limit << "ideas_cut.md" << 0 << "the list of ideas is incomplete";
            QTest::addRow("%s code cut", n) << p << limit << "truncated.md" << -1 << "cut off at the token limit";
        }
        QTest::addRow("anthropic context window, list cut") << Protocol::Anthropic << "model_context_window_exceeded"
                                                            << "ideas_cut.md" << 0 << "the list of ideas is incomplete";
        QTest::addRow("anthropic context window, code cut") << Protocol::Anthropic << "model_context_window_exceeded"
                                                            << "truncated.md" << -1 << "cut off";
    }

    void truncatedAnswersAreRecorded()
    {
        QFETCH(Protocol, protocol);
        QFETCH(QString, stop);
        QFETCH(QString, file);
        QFETCH(int, ideas);
        QFETCH(QString, error);
        const std::string text = dataFile(file.toStdString());
        QVERIFY(!text.empty());
        ReplayServer server([&](const ReplayRequest &) {
            ReplayReply r;
            r.body = protocol == Protocol::OpenAI ? openaiAnswer(text, stop.toStdString())
                                                  : anthropicAnswer(text, stop.toStdString());
            return r;
        });
        auto g = llmGenerator(protocol, server.url());
        QVERIFY(g);
        Context c;
        QString message;
        if (ideas >= 0) {
            auto got = g->proposeIdeas(c.ctx, 4);
            QCOMPARE(bool(got), error.isEmpty());
            if (got)
                QCOMPARE(int(got->size()), ideas);
            else
                message = q(got.error().message);
        } else {
            auto got = g->implement(c.ctx, someIdea(), 1);
            QVERIFY(!got);
            message = q(got.error().message);
        }
        QVERIFY2(message.contains(error), qPrintable(message));
        QCOMPARE(int(c.exchanges.size()), 1);
        const Exchange &e = c.exchanges.front();
        QCOMPARE(q(e.stopReason), stop);
        QCOMPARE(q(e.ending), QString("truncated"));
        QCOMPARE(e.answer, text); // the raw text is kept
        QVERIFY2(q(e.error).contains(error), qPrintable(q(e.error)));
    }

    // A refusal is recorded as one (the model's words, or the filter that withheld the answer),
    // not as an answer without code.
    void refusalsAreRecordedAsSuch_data()
    {
        QTest::addColumn<Protocol>("protocol");
        QTest::addColumn<QString>("kind");
        QTest::addColumn<QString>("stop");
        QTest::addColumn<QString>("error");
        QTest::newRow("openai refusal") << Protocol::OpenAI << "refusal"
                                        << "stop"
                                        << "refused: I can't help with that request.";
        QTest::newRow("openai content filter") << Protocol::OpenAI << "filter"
                                               << "content_filter"
                                               << "refused: withheld by 127.0.0.1:";
        QTest::newRow("openai content null") << Protocol::OpenAI << "null"
                                             << "stop"
                                             << "refused: no content in the answer (content null";
        QTest::newRow("openai streamed refusal") << Protocol::OpenAI << "stream"
                                                 << "stop"
                                                 << "refused: I can't help with that request.";
        QTest::newRow("anthropic refusal") << Protocol::Anthropic << "refusal"
                                           << "refusal"
                                           << "refused: declined by the model (stop_reason refusal)";
    }

    void refusalsAreRecordedAsSuch()
    {
        QFETCH(Protocol, protocol);
        QFETCH(QString, kind);
        QFETCH(QString, stop);
        QFETCH(QString, error);
        ReplayServer server([&](const ReplayRequest &) {
            ReplayReply r;
            if (protocol == Protocol::Anthropic) {
                r.body = anthropicAnswer("", "refusal");
            } else if (kind == "refusal") {
                r.body = openaiMessage(
                    {{"role", "assistant"}, {"content", nullptr}, {"refusal", "I can't help with that request."}},
                    "stop");
            } else if (kind == "filter") {
                r.body = openaiMessage({{"role", "assistant"}, {"content", nullptr}}, "content_filter");
            } else if (kind == "null") {
                r.body = openaiMessage({{"role", "assistant"}, {"content", nullptr}}, "stop");
            } else {
                std::vector<std::string> events = openaiEvents("", "stop");
                // The refusal comes in its own deltas instead of content.
                events.insert(events.begin() + 1,
                              "data: {\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"I can't help \"}}]}\n\n");
                events.insert(events.begin() + 2,
                              "data: {\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"with that request.\"}}]}\n\n");
                r = streamed(events);
            }
            return r;
        });
        auto g = llmGenerator(protocol, server.url());
        QVERIFY(g);
        Context c;
        auto drafts = g->implement(c.ctx, someIdea(), 1);
        QVERIFY(!drafts);
        QVERIFY2(q(drafts.error().message).contains(error), qPrintable(q(drafts.error().message)));
        QCOMPARE(int(c.exchanges.size()), 1);
        const Exchange &e = c.exchanges.front();
        QCOMPARE(q(e.ending), QString("refused"));
        QCOMPARE(q(e.stopReason), stop);
        QVERIFY2(q(e.error).startsWith("refused: "), qPrintable(q(e.error)));
        QVERIFY(!q(e.error).contains("code block"));
    }

    // Anthropic: adaptive thinking with an effort for the models that take only that, the budget
    // form for older ones; temperature within Anthropic's 0-1, and 1 or none while thinking;
    // reasoning_effort sent as output_config.effort with Anthropic's own values.
    void anthropicThinkingForms_data()
    {
        QTest::addColumn<QByteArray>("settings"); // JSON on top of the test settings
        QTest::addColumn<QByteArray>("thinking"); // the thinking sent, "null" for none
        QTest::addColumn<QString>("effort");      // output_config.effort sent, "" for none
        QTest::addColumn<QString>("error");       // the settings error, "" when it is accepted
        QTest::newRow("adaptive with effort") << QByteArray(R"({"thinking": "adaptive", "reasoning_effort": "xhigh"})")
                                              << QByteArray(R"({"type": "adaptive"})") << "xhigh"
                                              << "";
        QTest::newRow("adaptive, max effort") << QByteArray(R"({"thinking": "adaptive", "reasoning_effort": "max"})")
                                              << QByteArray(R"({"type": "adaptive"})") << "max"
                                              << "";
        QTest::newRow("effort alone") << QByteArray(R"({"reasoning_effort": "low"})") << QByteArray("null") << "low"
                                      << "";
        QTest::newRow("budget form") << QByteArray(R"({"thinking": "enabled", "thinking_budget": 4096})")
                                     << QByteArray(R"({"type": "enabled", "budget_tokens": 4096})") << ""
                                     << "";
        QTest::newRow("thinking off") << QByteArray(R"({"thinking": "disabled", "temperature": 0.2})")
                                      << QByteArray(R"({"type": "disabled"})") << ""
                                      << "";
        QTest::newRow("adaptive with a budget")
            << QByteArray(R"({"thinking": "adaptive", "thinking_budget": 4096})") << QByteArray() << ""
            << "thinking_budget belongs to thinking enabled";
        QTest::newRow("enabled without a budget") << QByteArray(R"({"thinking": "enabled"})") << QByteArray() << ""
                                                  << "thinking_budget must be at least 1024";
        QTest::newRow("unknown thinking") << QByteArray(R"({"thinking": "deep"})") << QByteArray() << ""
                                          << "thinking must be adaptive, enabled";
        QTest::newRow("temperature above 1") << QByteArray(R"({"temperature": 1.5})") << QByteArray() << ""
                                             << "temperature must be between 0 and 1";
        QTest::newRow("temperature while thinking")
            << QByteArray(R"({"thinking": "adaptive", "temperature": 0.7})") << QByteArray() << ""
            << "temperature must be 1 or left out while thinking is adaptive";
        QTest::newRow("OpenAI's effort") << QByteArray(R"({"reasoning_effort": "minimal"})") << QByteArray() << ""
                                         << "output_config.effort, which takes low, medium, high, xhigh, max";
    }

    void anthropicThinkingForms()
    {
        QFETCH(QByteArray, settings);
        QFETCH(QByteArray, thinking);
        QFETCH(QString, effort);
        QFETCH(QString, error);
        ReplayServer server(
            [&](const ReplayRequest &) { return answer(Protocol::Anthropic, dataFile("ideas_round1.md")); });
        const auto extra = nlohmann::json::parse(settings.toStdString());
        auto made = llm::LlmGenerator::make(Protocol::Anthropic, llmSettings(Protocol::Anthropic, server.url(), extra));
        if (!error.isEmpty()) {
            QVERIFY(!made);
            QVERIFY2(q(made.error().message).contains(error), qPrintable(q(made.error().message)));
            return;
        }
        QVERIFY2(made, made ? "" : qPrintable(q(made.error().text())));
        Context c;
        QVERIFY((*made)->proposeIdeas(c.ctx, 2));
        const auto body = nlohmann::json::parse(server.requests().front().body);
        QCOMPARE(body.value("thinking", nlohmann::json()), nlohmann::json::parse(thinking.toStdString()));
        QCOMPARE(q(body.contains("output_config") ? body["output_config"]["effort"].get<std::string>() : ""), effort);
        // Kept for a resume the same way.
        auto again = llm::configFromJson(Protocol::Anthropic, (*made)->settings());
        QVERIFY(again);
        QCOMPARE(again->thinking, (*made)->config().thinking);
        QCOMPARE(again->reasoningEffort, effort.toStdString());
    }

    // OpenAI-compatible: every reasoning_effort the API documents; the field the answer limit goes
    // in is a setting; temperature together with a reasoning effort gets a warning.
    void openaiSettings()
    {
        using llm::configFromJson;
        for (const char *e : {"none", "minimal", "low", "medium", "high", "xhigh"})
            QVERIFY2(configFromJson(Protocol::OpenAI, {{"model", "m"}, {"reasoning_effort", e}}), e);
        auto max = configFromJson(Protocol::OpenAI, {{"model", "m"}, {"reasoning_effort", "max"}});
        QVERIFY(!max);
        QVERIFY2(q(max.error().message).contains("must be one of none, minimal, low, medium, high, xhigh"),
                 qPrintable(q(max.error().message)));
        QVERIFY(!configFromJson(Protocol::OpenAI, {{"model", "m"}, {"thinking", "adaptive"}}));
        QVERIFY(!configFromJson(Protocol::OpenAI, {{"model", "m"}, {"max_tokens_field", "max_output_tokens"}}));

        // The field: max_completion_tokens for OpenAI's own API, max_tokens elsewhere, unless set.
        QCOMPARE(configFromJson(Protocol::OpenAI, {{"model", "m"}})->maxTokensField,
                 std::string("max_completion_tokens"));
        ReplayServer server(
            [&](const ReplayRequest &) { return answer(Protocol::OpenAI, dataFile("ideas_round1.md")); });
        for (const char *field : {"max_completion_tokens", "max_tokens"}) {
            auto g = llmGenerator(Protocol::OpenAI, server.url(), {{"max_tokens", 3000}, {"max_tokens_field", field}});
            QVERIFY(g);
            Context c;
            QVERIFY(g->proposeIdeas(c.ctx, 2));
            const auto body = nlohmann::json::parse(server.requests().back().body);
            QCOMPARE(body[field].get<int>(), 3000);
            QCOMPARE(int(body.count("max_tokens") + body.count("max_completion_tokens")), 1);
            QCOMPARE(g->settings()["max_tokens_field"].get<std::string>(), std::string(field));
        }

        auto warned =
            configFromJson(Protocol::OpenAI, {{"model", "m"}, {"temperature", 0.5}, {"reasoning_effort", "high"}});
        QVERIFY(warned);
        QCOMPARE(int(warned->warnings.size()), 1);
        QVERIFY2(q(warned->warnings[0]).contains("temperature 0.5 is sent with reasoning_effort high"),
                 qPrintable(q(warned->warnings[0])));
        QVERIFY(configFromJson(Protocol::OpenAI, {{"model", "m"}, {"temperature", 0.5}})->warnings.empty());
        QVERIFY(configFromJson(Protocol::OpenAI, {{"model", "m"}, {"temperature", 0.5}, {"reasoning_effort", "none"}})
                    ->warnings.empty());
        QVERIFY(configFromJson(Protocol::OpenAI, {{"model", "m"}, {"temperature", 1.8}})); // OpenAI's range is 0-2
    }
};

QTEST_GUILESS_MAIN(TestLlm)
#include "test_llm.moc"
