// The LLM generators against a replay server on 127.0.0.1 that speaks each protocol: answers
// as models write them (bare JSON, JSON in prose, code blocks, no code, cut off), and the ways a
// server fails (401, 429 with Retry-After, 500, a hang, a dropped connection, no server at all).
// Each case must end as docs/llm.md says.
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

Problem smallSoftmax()
{
    auto p = loadProblemFile(KF_SOURCE_DIR "/problems/seed/softmax.toml", "small");
    return p ? *p : Problem{};
}

// A context as the search builds it, with a sink that keeps every exchange.
struct Context {
    GenContext ctx;
    std::vector<Exchange> exchanges;
    std::atomic<bool> cancel{false};

    Context()
    {
        ctx.problem = smallSoftmax();
        ctx.round = 1;
        ctx.gpu.reason = "no CUDA driver";
        ctx.cancel = &cancel;
        ctx.record = [this](const Exchange &e) {
            exchanges.push_back(e);
            return std::int64_t(exchanges.size());
        };
    }
};

Idea someIdea(std::int64_t node = 7)
{
    Idea i;
    i.id = "block-per-row";
    i.title = "Block per row";
    i.text = "One block per row.";
    i.node = node;
    return i;
}

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
            auto g = llmGenerator(Protocol::Anthropic, server.url(),
                                  {{"temperature", 0.7}, {"max_tokens", 8000}, {"thinking_budget", 2048}});
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
        QCOMPARE(ob["temperature"].get<double>(), 0.7);
        QCOMPARE(ob["reasoning_effort"].get<std::string>(), std::string("high"));
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
        QCOMPARE(ab["thinking"]["budget_tokens"].get<int>(), 2048);
        QVERIFY(!ab.contains("temperature")); // extended thinking takes none
    }

    void serverFailures_data()
    {
        QTest::addColumn<Protocol>("protocol");
        QTest::addColumn<QString>("scenario");
        QTest::addColumn<QString>("expected");
        QTest::addColumn<int>("attempts");
        QTest::addRow("openai 401") << Protocol::OpenAI << "401" << "key rejected by 127.0.0.1:" << 1;
        QTest::addRow("anthropic 401") << Protocol::Anthropic << "401" << "key rejected by 127.0.0.1:" << 1;
        QTest::addRow("openai 500") << Protocol::OpenAI << "500" << "failed (HTTP 500: The server had an error" << 3;
        QTest::addRow("anthropic 529") << Protocol::Anthropic << "529" << "failed (HTTP 529" << 3;
        QTest::addRow("openai hang") << Protocol::OpenAI << "hang" << "no answer from 127.0.0.1:" << 1;
        QTest::addRow("anthropic drop") << Protocol::Anthropic << "drop" << "closed the connection before the answer"
                                        << 3;
        QTest::addRow("openai half an answer") << Protocol::OpenAI << "partial"
                                               << "closed the connection before the answer" << 3;
        QTest::addRow("openai no server") << Protocol::OpenAI << "refused" << "no server at http://127.0.0.1:" << 1;
        QTest::addRow("anthropic not json") << Protocol::Anthropic << "garbage" << "is not a message" << 1;
        QTest::addRow("openai 501") << Protocol::OpenAI << "501" << "failed (HTTP 501" << 1;
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
        const std::string url = scenario == "refused" ? "http://127.0.0.1:" + std::to_string(closedPort()) : server.url();
        auto g = llmGenerator(protocol, url, {{"timeout_s", 1}});
        QVERIFY(g);
        Context c;
        const auto started = std::chrono::steady_clock::now();
        auto ideas = g->proposeIdeas(c.ctx, 2);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
        QVERIFY(!ideas);
        const QString message = q(ideas.error().message);
        QVERIFY2(message.contains(expected), qPrintable(message));
        QCOMPARE(ideas.error().code, std::string("llm"));
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
        QCOMPARE(llm::retryWaitSeconds(1, "", llm::HttpOptions{}), 2.0);
        QCOMPARE(llm::retryWaitSeconds(3, "", llm::HttpOptions{}), 8.0);
        QCOMPARE(llm::retryWaitSeconds(1, "30", llm::HttpOptions{}), 30.0);
        QCOMPARE(llm::retryWaitSeconds(1, "9999", llm::HttpOptions{}), 120.0); // capped
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
        QCOMPARE(results[0].error().code, std::string("cancelled"));
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
        auto c = configFromJson(Protocol::Anthropic, {{"model", "claude-x"}, {"api_key", "sk-ant-secret-from-settings"}});
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
            auto g = llm::LlmGenerator::make(p, {{"model", "m"}, {"base_url", url}, {"key_env", "KF_TEST_NO_SUCH_KEY"}});
            QVERIFY(!g);
            QVERIFY2(q(g.error().message).contains("KF_TEST_NO_SUCH_KEY"), qPrintable(q(g.error().message)));
            QVERIFY(q(g.error().message).contains("no API key for api."));
        }
        // A local server needs none, and none is sent.
        ReplayServer server([&](const ReplayRequest &) { return answer(Protocol::OpenAI, dataFile("ideas_round1.md")); });
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
        auto ideas = llm::parseIdeas(R"([{"title": "A", "builds_on": "#12"}, {"title": "B", "builds_on": "reference"}])",
                                     false);
        QVERIFY(ideas);
        QCOMPARE((*ideas)[0].buildsOn, std::int64_t(12));
        QCOMPARE((*ideas)[1].buildsOn, std::int64_t(0));
    }
};

QTEST_GUILESS_MAIN(TestLlm)
#include "test_llm.moc"
