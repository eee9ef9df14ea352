// How the LLM generators' requests travel, against the replay server: streamed answers of both
// protocols (server-sent events, chunked, gzip), a time-out on silence rather than on the whole
// answer, TCP keep-alive, retries as the providers' SDKs make them (which failures, how long
// between), a connect time-out, and proxies from the environment.
#include "llm_support.h"

#include <QtTest>

#include <curl/curl.h>

#include <chrono>
#include <thread>

using namespace kf;
using namespace kf::test;
using llm::Protocol;
Q_DECLARE_METATYPE(kf::llm::Protocol)

namespace {

QString q(const std::string &s) { return QString::fromStdString(s); }

double secondsSince(std::chrono::steady_clock::time_point t)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Asks for ideas; what went wrong ("" when they came) and how long it took.
std::pair<QString, double> askIdeas(llm::LlmGenerator &g, Context &c)
{
    const auto started = std::chrono::steady_clock::now();
    auto ideas = g.proposeIdeas(c.ctx, 2);
    return {ideas ? QString() : q(ideas.error().message), secondsSince(started)};
}

std::vector<std::string> events(Protocol p, const std::string &text)
{
    return p == Protocol::OpenAI ? openaiEvents(text) : anthropicEvents(text);
}

ReplayReply status(int code, const std::string &body = R"({"error": {"message": "try again"}})")
{
    ReplayReply r;
    r.status = code;
    r.body = body;
    return r;
}

} // namespace

class TestLlmTransport : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { qputenv(kKeyEnv, kTestKey); }

    // A streamed answer reads as the same answer unstreamed, and is kept as one document.
    void streamedAnswers_data()
    {
        QTest::addColumn<Protocol>("protocol");
        QTest::addColumn<bool>("gzip");
        QTest::newRow("openai") << Protocol::OpenAI << false;
        QTest::newRow("anthropic") << Protocol::Anthropic << false;
        QTest::newRow("openai gzip") << Protocol::OpenAI << true;
        QTest::newRow("anthropic gzip") << Protocol::Anthropic << true;
    }

    void streamedAnswers()
    {
        QFETCH(Protocol, protocol);
        QFETCH(bool, gzip);
        const std::string text = dataFile("ideas_round1.md");
        ReplayServer server([&](const ReplayRequest &) {
            ReplayReply r = streamed(events(protocol, text));
            r.gzip = gzip;
            return r;
        });
        auto g = llmGenerator(protocol, server.url());
        QVERIFY(g);
        Context c;
        Usage usage;
        auto ideas = g->proposeIdeas(c.ctx, 2, &usage);
        QVERIFY2(ideas, ideas ? "" : qPrintable(q(ideas.error().text())));
        QCOMPARE(int(ideas->size()), 2);
        const Exchange &e = c.exchanges.front();
        QCOMPARE(e.answer, text);
        QCOMPARE(e.usage.promptTokens, std::int64_t(1000)); // from the stream's first or last event
        QCOMPARE(e.usage.completionTokens, std::int64_t(500));
        QCOMPARE(usage.completionTokens, std::int64_t(500));
        QCOMPARE(q(e.ending), QString("complete"));
        QCOMPARE(q(e.stopReason), QString(protocol == Protocol::OpenAI ? "stop" : "end_turn"));
        if (protocol == Protocol::Anthropic)
            QCOMPARE(q(e.reasoning), QString("Let me think about the memory traffic."));
        // One document, not the events.
        QVERIFY(!q(e.response).contains("data:"));
        auto kept = nlohmann::json::parse(e.response, nullptr, false);
        QVERIFY(!kept.is_discarded());
        QVERIFY(kept.contains(protocol == Protocol::OpenAI ? "choices" : "content"));
        const ReplayRequest asked = server.requests().front();
        QCOMPARE(nlohmann::json::parse(asked.body)["stream"].get<bool>(), true);
        if (gzip) // the client asked for it, so the body really came compressed
            QVERIFY(q(asked.headers.at("accept-encoding")).contains("gzip"));
    }

    // Plain JSON bodies sent chunked, or compressed, read the same.
    void chunkedAndCompressedBodies_data()
    {
        QTest::addColumn<bool>("chunked");
        QTest::addColumn<bool>("gzip");
        QTest::newRow("chunked") << true << false;
        QTest::newRow("gzip") << false << true;
        QTest::newRow("chunked gzip") << true << true;
    }

    void chunkedAndCompressedBodies()
    {
        QFETCH(bool, chunked);
        QFETCH(bool, gzip);
        const std::string body = openaiAnswer(dataFile("ideas_round1.md"));
        ReplayServer server([&](const ReplayRequest &) {
            ReplayReply r;
            if (chunked)
                r.pieces = {body.substr(0, 100), body.substr(100, 1000), body.substr(1100)};
            else
                r.body = body;
            r.gzip = gzip;
            return r;
        });
        auto g = llmGenerator(Protocol::OpenAI, server.url(), {{"stream", false}});
        Context c;
        auto ideas = g->proposeIdeas(c.ctx, 2);
        QVERIFY2(ideas, ideas ? "" : qPrintable(q(ideas.error().text())));
        QCOMPARE(int(ideas->size()), 2);
        QCOMPARE(c.exchanges.front().response, body);
        QVERIFY(!nlohmann::json::parse(server.requests().front().body).contains("stream"));
    }

    // A stream that trickles for longer than the time-out is not cut: the time-out is on silence.
    void slowTrickleOutlivesTheTimeout()
    {
        ReplayServer server([&](const ReplayRequest &) {
            std::vector<std::string> all = anthropicEvents(dataFile("kernel_block_row.md"));
            return streamed(all, int(3200 / all.size()) + 1); // about 3.2 s in all, no gap of 1 s
        });
        auto g = llmGenerator(Protocol::Anthropic, server.url(), {{"timeout_s", 1}});
        Context c;
        const auto started = std::chrono::steady_clock::now();
        auto drafts = g->implement(c.ctx, someIdea(), 1);
        const double seconds = secondsSince(started);
        QVERIFY2(drafts, drafts ? "" : qPrintable(q(drafts.error().text())));
        QVERIFY2(seconds > 2.5, qPrintable(QString::number(seconds)));
        QCOMPARE(c.exchanges.front().attempts, 1);
    }

    // Silence ends an attempt, also in the middle of a stream, and is not retried.
    void silenceEndsAStream()
    {
        ReplayServer server([&](const ReplayRequest &) {
            ReplayReply r = streamed(std::vector<std::string>(3, ": keep-alive\n\n"), 100);
            r.action = ReplayReply::Action::Hang;
            return r;
        });
        auto g = llmGenerator(Protocol::OpenAI, server.url(), {{"timeout_s", 1}});
        Context c;
        const auto [message, seconds] = askIdeas(*g, c);
        QVERIFY2(message.contains("no answer from 127.0.0.1:") && message.contains("nothing arrived for 1 s"),
                 qPrintable(message));
        QVERIFY2(seconds > 1.2 && seconds < 4, qPrintable(QString::number(seconds)));
        QCOMPARE(c.exchanges.front().attempts, 1);
    }

    // An error event after the stream began is the server's failure, in its words.
    void errorInsideAStream()
    {
        ReplayServer server([&](const ReplayRequest &) {
            std::vector<std::string> all = anthropicEvents("Here is the kernel");
            all.resize(4);
            all.push_back("event: error\ndata: {\"type\": \"error\", \"error\": {\"type\": \"overloaded_error\", "
                          "\"message\": \"Overloaded\"}}\n\n");
            return streamed(all);
        });
        auto g = llmGenerator(Protocol::Anthropic, server.url());
        Context c;
        auto drafts = g->implement(c.ctx, someIdea(), 1);
        QVERIFY(!drafts);
        QVERIFY2(q(drafts.error().message).contains("127.0.0.1:") &&
                     q(drafts.error().message).contains("reported an error instead of the answer: Overloaded"),
                 qPrintable(q(drafts.error().message)));
    }

    // Connections stay open through NAT and firewalls while a model thinks: keep-alive probes are
    // armed on the socket (Linux shows the timer in /proc/net/tcp).
    void keepAliveOnTheConnection()
    {
        if (!QFile::exists("/proc/net/tcp"))
            QSKIP("no /proc/net/tcp on this system");
        std::atomic<int> peer{0};
        ReplayServer server([&](const ReplayRequest &r) {
            peer = r.peerPort;
            ReplayReply reply;
            reply.action = ReplayReply::Action::Hang;
            return reply;
        });
        auto g = llmGenerator(Protocol::OpenAI, server.url(), {{"timeout_s", 30}});
        Context c;
        int timer = -1;
        std::thread watcher([&] {
            for (int i = 0; i < 100 && timer != 2; ++i) {
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
                if (peer)
                    timer = tcpTimer(peer, server.port());
            }
            c.cancel = true;
        });
        auto ideas = g->proposeIdeas(c.ctx, 2);
        watcher.join();
        QVERIFY(!ideas);
        QCOMPARE(timer, 2); // 2: the keep-alive timer; 0 would be none
    }

    // Which failures are retried, as the providers' SDKs decide.
    void retriesAsTheSdks_data()
    {
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("header"); // x-should-retry, or "" for none
        QTest::addColumn<QString>("body");   // a data file, or "" for a plain error
        QTest::addColumn<int>("attempts");
        QTest::addColumn<QString>("message");
        QTest::newRow("408") << 408 << ""
                             << "" << 3 << "refused the request (HTTP 408";
        QTest::newRow("409") << 409 << ""
                             << "" << 3 << "refused the request (HTTP 409";
        QTest::newRow("429") << 429 << ""
                             << "rate_limited_429.json" << 3 << "rate limited by 127.0.0.1:";
        QTest::newRow("500") << 500 << ""
                             << "" << 3 << "failed (HTTP 500";
        QTest::newRow("501") << 501 << ""
                             << "" << 3 << "failed (HTTP 501";
        QTest::newRow("529") << 529 << ""
                             << "" << 3 << "failed (HTTP 529";
        QTest::newRow("400") << 400 << ""
                             << "" << 1 << "refused the request (HTTP 400";
        QTest::newRow("404") << 404 << ""
                             << "" << 1 << "not found on 127.0.0.1:";
        QTest::newRow("quota used up") << 429 << ""
                                       << "quota_429.json" << 1 << "the quota at 127.0.0.1:";
        QTest::newRow("should not retry") << 503 << "false"
                                          << "" << 1 << "failed (HTTP 503";
        QTest::newRow("should retry") << 400 << "true"
                                      << "" << 3 << "refused the request (HTTP 400";
    }

    void retriesAsTheSdks()
    {
        QFETCH(int, code);
        QFETCH(QString, header);
        QFETCH(QString, body);
        QFETCH(int, attempts);
        QFETCH(QString, message);
        ReplayServer server([&](const ReplayRequest &) {
            ReplayReply r = body.isEmpty() ? status(code) : status(code, dataFile(body.toStdString()));
            if (!header.isEmpty())
                r.headers = {{"x-should-retry", header.toStdString()}};
            return r;
        });
        auto g = llmGenerator(Protocol::OpenAI, server.url(), {{"retries", 2}, {"max_wait_s", 0.1}});
        Context c;
        const QString said = askIdeas(*g, c).first;
        QVERIFY2(said.contains(message), qPrintable(said));
        QCOMPARE(c.exchanges.front().attempts, attempts);
        QCOMPARE(int(server.requests().size()), attempts);
    }

    // Lost connections, names not resolved and HTTP/2 errors are retried; silence, a time limit
    // and cancel are not. A connect time-out is a connection never made: retried.
    void transportFailures()
    {
        llm::HttpResult r;
        for (int code :
             {CURLE_COULDNT_CONNECT, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_HTTP2,
              CURLE_HTTP2_STREAM, CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE}) {
            r.transport = code;
            QVERIFY2(llm::retryable(r), curl_easy_strerror(CURLcode(code)));
        }
        r.transport = CURLE_OPERATION_TIMEDOUT;
        r.connected = false;
        QVERIFY(llm::retryable(r)); // connecting timed out
        r.connected = true;
        r.silent = true;
        QVERIFY(!llm::retryable(r)); // silence
        r.silent = false;
        QVERIFY(!llm::retryable(r)); // max_time_s
        r.transport = CURLE_PEER_FAILED_VERIFICATION;
        QVERIFY(!llm::retryable(r));
        r.transport = CURLE_COULDNT_CONNECT;
        r.cancelled = true;
        QVERIFY(!llm::retryable(r));
    }

    void connectTimeOut()
    {
        UnansweredPort port;
        if (!port.ready())
            QSKIP("cannot fill a listen queue on 127.0.0.1 here");
        auto g =
            llmGenerator(Protocol::OpenAI, port.url(), {{"connect_timeout_s", 0.4}, {"retries", 1}, {"timeout_s", 30}});
        QVERIFY(g);
        Context c;
        const auto [message, seconds] = askIdeas(*g, c);
        QVERIFY2(message.contains("could not connect to 127.0.0.1:") &&
                     message.contains("within 0.4 s, after 2 attempts"),
                 qPrintable(message));
        QCOMPARE(c.exchanges.front().attempts, 2);
        QCOMPARE(c.exchanges.front().httpStatus, 0);
        QVERIFY2(seconds > 0.75 && seconds < 5, qPrintable(QString::number(seconds)));
    }

    // The wait the server asks for (retry-after-ms, retry-after in seconds or as an HTTP date),
    // else exponential backoff shortened by up to a quarter at random.
    void retryWaits_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("value");
        QTest::addColumn<double>("atLeast");
        QTest::newRow("retry-after-ms") << "retry-after-ms"
                                        << "700" << 0.65;
        QTest::newRow("retry-after seconds") << "Retry-After"
                                             << "1" << 0.95;
        QTest::newRow("retry-after date") << "Retry-After"
                                          << "date 2 s ahead" << 0.9; // made when served
    }

    void retryWaits()
    {
        QFETCH(QString, name);
        QFETCH(QString, value);
        QFETCH(double, atLeast);
        std::atomic<int> calls{0};
        ReplayServer server([&](const ReplayRequest &) {
            if (calls++ == 0) {
                ReplayReply r = status(429, dataFile("rate_limited_429.json"));
                r.headers = {{name.toStdString(), value.startsWith("date") ? httpDate(2) : value.toStdString()}};
                return r;
            }
            return answer(Protocol::OpenAI, dataFile("ideas_round1.md"));
        });
        auto g = llmGenerator(Protocol::OpenAI, server.url()); // backoff 0.05 s: the server's wait wins
        Context c;
        const auto [message, seconds] = askIdeas(*g, c);
        QVERIFY2(message.isEmpty(), qPrintable(message));
        QCOMPARE(c.exchanges.front().attempts, 2);
        QVERIFY2(seconds >= atLeast && seconds < 3, qPrintable(QString::number(seconds)));
    }

    void retryWaitFigures()
    {
        using llm::retryWaitSeconds;
        llm::HttpOptions o;
        o.backoffSeconds = 2;
        o.maxWaitSeconds = 120;
        llm::HttpResult r;
        QCOMPARE(retryWaitSeconds(1, r, o, 0.0), 2.0);
        QCOMPARE(retryWaitSeconds(3, r, o, 0.0), 8.0);
        QCOMPARE(retryWaitSeconds(1, r, o, 0.5), 1.75); // a quarter off at most: 1.5 to 2 s
        QVERIFY(retryWaitSeconds(1, r, o, 0.999) > 1.5);
        QCOMPARE(retryWaitSeconds(10, r, o, 0.0), 120.0); // capped
        r.retryAfter = "30";
        QCOMPARE(retryWaitSeconds(1, r, o, 0.9), 30.0); // the server's wait has no jitter
        r.retryAfter = "9999";
        QCOMPARE(retryWaitSeconds(1, r, o, 0.0), 120.0);
        r.retryAfter = httpDate(-60); // a date gone by: at once
        QCOMPARE(retryWaitSeconds(1, r, o, 0.0), 0.0);
        r.retryAfterMs = "1500"; // comes before retry-after
        QCOMPARE(retryWaitSeconds(1, r, o, 0.0), 1.5);
    }

    // Proxies come from the environment, and so does NO_PROXY: a host it names is reached directly.
    void noProxyFromTheEnvironment()
    {
        ReplayServer proxy(
            [&](const ReplayRequest &) { return answer(Protocol::OpenAI, dataFile("ideas_round1.md")); });
        ReplayServer target(
            [&](const ReplayRequest &) { return answer(Protocol::OpenAI, dataFile("ideas_round1.md")); }, "127.0.0.2");
        if (!target.listening())
            QSKIP("cannot listen on 127.0.0.2 here");
        const std::string proxyUrl = proxy.url();
        ScopedEnv http("http_proxy", proxyUrl.c_str());
        ScopedEnv upper("HTTP_PROXY", nullptr);
        {
            ScopedEnv none("NO_PROXY", nullptr), lower("no_proxy", nullptr);
            Context c;
            QVERIFY(llmGenerator(Protocol::OpenAI, target.url())->proposeIdeas(c.ctx, 2));
            QCOMPARE(int(proxy.requests().size()), 1); // 127.0.0.2 is not named: through the proxy
            QCOMPARE(int(target.requests().size()), 0);
        }
        {
            ScopedEnv none("NO_PROXY", "example.org,127.0.0.2"), lower("no_proxy", nullptr);
            Context c;
            QVERIFY(llmGenerator(Protocol::OpenAI, target.url())->proposeIdeas(c.ctx, 2));
            QCOMPARE(int(proxy.requests().size()), 1);
            QCOMPARE(int(target.requests().size()), 1);
        }
        {
            // This machine's own address is always reached directly, NO_PROXY or not.
            ScopedEnv none("NO_PROXY", "example.org"), lower("no_proxy", nullptr);
            ReplayServer local(
                [&](const ReplayRequest &) { return answer(Protocol::OpenAI, dataFile("ideas_round1.md")); });
            Context c;
            QVERIFY(llmGenerator(Protocol::OpenAI, local.url())->proposeIdeas(c.ctx, 2));
            QCOMPARE(int(proxy.requests().size()), 1);
            QCOMPARE(int(local.requests().size()), 1);
        }
    }
};

QTEST_GUILESS_MAIN(TestLlmTransport)
#include "test_llm_transport.moc"
