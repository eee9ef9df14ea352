// Where an API key may go: a provider's default variable only to that provider's own host over
// HTTPS, any other server only the key of a variable named for it, no key in clear text to
// another machine, and no credentials written into a base URL in anything kept or shown.
#include "gen/llm/url.h"
#include "llm_support.h"

#include <QtTest>

using namespace kf;
using namespace kf::test;
using llm::Protocol;

namespace {

QString q(const std::string &s) { return QString::fromStdString(s); }

constexpr const char *kOpenAIDefault = "sk-openai-default-0123456789";
constexpr const char *kAnthropicDefault = "sk-ant-default-0123456789";

// The key headers of a request, "" when it carries none.
std::string keyHeader(const std::vector<std::string> &headers)
{
    for (const auto &h : headers)
        if (h.rfind("Authorization:", 0) == 0 || h.rfind("x-api-key:", 0) == 0)
            return h;
    return {};
}

std::string keyHeader(const ReplayRequest &r)
{
    for (const char *name : {"authorization", "x-api-key"})
        if (auto it = r.headers.find(name); it != r.headers.end())
            return std::string(name) + ": " + it->second;
    return {};
}

} // namespace

class TestLlmKeys : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { qputenv(kKeyEnv, kTestKey); }

    // The README's own exports, and a server that is not the provider's: no key goes there
    // unless one is named for it.
    void defaultKeysStayWithTheirProvider()
    {
        ScopedEnv openai("OPENAI_API_KEY", kOpenAIDefault), anthropic("ANTHROPIC_API_KEY", kAnthropicDefault);
        ReplayServer server([&](const ReplayRequest &r) {
            return answer(r.path == "/v1/messages" ? Protocol::Anthropic : Protocol::OpenAI,
                          dataFile("ideas_round1.md"));
        });
        for (Protocol p : {Protocol::OpenAI, Protocol::Anthropic}) {
            nlohmann::json unnamed = llmSettings(p, server.url());
            unnamed.erase("key_env");
            auto g = llm::LlmGenerator::make(p, unnamed);
            QVERIFY2(g, g ? "" : qPrintable(q(g.error().text())));
            QCOMPARE((*g)->config().keyEnv, std::string());
            Context c;
            QVERIFY((*g)->proposeIdeas(c.ctx, 2));
            QCOMPARE(keyHeader(server.requests().back()), std::string()); // no key at all

            auto named = llmGenerator(p, server.url()); // key_env names the test's variable
            Context d;
            QVERIFY(named->proposeIdeas(d.ctx, 2));
            QCOMPARE(keyHeader(server.requests().back()),
                     p == Protocol::OpenAI ? std::string("authorization: Bearer ") + kTestKey
                                           : std::string("x-api-key: ") + kTestKey);
        }
        // The provider's own API gets its own key (asked for without a network: the request only).
        auto openaiConfig = llm::configFromJson(Protocol::OpenAI, {{"model", "m"}});
        QVERIFY(openaiConfig);
        QCOMPARE(keyHeader(llm::makeBackend(*openaiConfig)->request({"s", "u"}).headers),
                 std::string("Authorization: Bearer ") + kOpenAIDefault);
        auto anthropicConfig = llm::configFromJson(Protocol::Anthropic, {{"model", "m"}});
        QCOMPARE(keyHeader(llm::makeBackend(*anthropicConfig)->request({"s", "u"}).headers),
                 std::string("x-api-key: ") + kAnthropicDefault);
        // ... and only over HTTPS.
        auto plain = llm::configFromJson(Protocol::OpenAI, {{"model", "m"}, {"base_url", "http://api.openai.com/v1"}});
        QVERIFY(plain);
        QCOMPARE(keyHeader(llm::makeBackend(*plain)->request({"s", "u"}).headers), std::string());
    }

    // Naming a provider's default variable for another server is refused, not quietly obeyed.
    void defaultVariablesAreNotLent()
    {
        ReplayServer server(
            [&](const ReplayRequest &) { return answer(Protocol::OpenAI, dataFile("ideas_round1.md")); });
        auto lent = llm::LlmGenerator::make(
            Protocol::OpenAI, llmSettings(Protocol::OpenAI, server.url(), {{"key_env", "OPENAI_API_KEY"}}));
        QVERIFY(!lent);
        QVERIFY2(q(lent.error().message)
                     .contains("generator setting key_env names OPENAI_API_KEY, the key for "
                               "https://api.openai.com, which is sent nowhere else"),
                 qPrintable(q(lent.error().message)));
        auto crossed = llm::configFromJson(Protocol::OpenAI, {{"model", "m"}, {"key_env", "ANTHROPIC_API_KEY"}});
        QVERIFY(!crossed);
        QVERIFY(q(crossed.error().message).contains("ANTHROPIC_API_KEY"));
        QVERIFY(server.requests().empty());
    }

    void noKeyInClearText_data()
    {
        QTest::addColumn<QString>("url");
        QTest::addColumn<QByteArray>("key"); // the key settings, as JSON
        QTest::addColumn<QString>("error");  // "" when accepted
        const QByteArray named = R"({"key_env": "KF_TEST_LLM_KEY"})";
        QTest::newRow("LAN over HTTP with a key") << "http://192.0.2.10:8000/v1" << named
                                                  << "generator setting key_env would send a key in clear text over "
                                                     "plain HTTP to 192.0.2.10:8000";
        QTest::newRow("LAN over HTTP, workbench key")
            << "http://192.0.2.10:8000/v1" << QByteArray(R"({"api_key": "sk-from-a-file-0123456789"})")
            << "generator setting api_key would send a key in clear text";
        QTest::newRow("LAN over HTTP, URL credentials")
            << "http://user:password123@192.0.2.10:8000/v1" << QByteArray(R"({"key_env": ""})")
            << "generator setting base_url would send a key in clear text";
        QTest::newRow("LAN over HTTP without a key")
            << "http://192.0.2.10:8000/v1" << QByteArray(R"({"key_env": ""})") << "";
        QTest::newRow("LAN over HTTP, nothing named") << "http://192.0.2.10:8000/v1" << QByteArray("{}") << "";
        QTest::newRow("LAN over HTTPS with a key") << "https://192.0.2.10:8000/v1" << named << "";
        QTest::newRow("localhost with a key") << "http://localhost:8000/v1" << named << "";
        QTest::newRow("127.0.0.5 with a key") << "http://127.0.0.5:8000/v1" << named << "";
        QTest::newRow("::1 with a key") << "http://[::1]:8000/v1" << named << "";
    }

    void noKeyInClearText()
    {
        QFETCH(QString, url);
        QFETCH(QByteArray, key);
        QFETCH(QString, error);
        nlohmann::json s = {{"model", "m"}, {"base_url", url.toStdString()}};
        s.update(nlohmann::json::parse(key.toStdString()));
        auto c = llm::configFromJson(Protocol::OpenAI, s);
        QCOMPARE(bool(c), error.isEmpty());
        if (!c) {
            QVERIFY2(q(c.error().message).startsWith(error), qPrintable(q(c.error().message)));
            QVERIFY(!q(c.error().message).contains("password123"));
        }
        // Whatever built a config, key() itself never hands a key to plain HTTP off this machine.
        llm::LlmConfig handMade;
        handMade.baseUrl = url.toStdString();
        handMade.apiKey = "sk-hand-made-0123456789";
        llm::Url u;
        QVERIFY(llm::parseUrl(handMade.baseUrl, u));
        QCOMPARE(handMade.key().empty(), u.scheme == "http" && !llm::isLoopback(u.host));
    }

    // user:pass@ and ?api-key= in a base URL are used for the requests and kept out of everything
    // stored or printed: the session's settings, exchanges, messages, even a server's echo.
    void credentialsInTheUrlAreStripped()
    {
        const std::string password = "kf-url-password-123", urlKey = "kf-url-key-0123456789";
        ReplayServer server([&](const ReplayRequest &r) {
            if (r.path.rfind("/v1/models", 0) == 0) {
                ReplayReply missing;
                missing.status = 404;
                missing.body = nlohmann::json{{"error", {{"message", "no model list at " + r.path}}}}.dump();
                return missing;
            }
            return answer(Protocol::OpenAI, dataFile("ideas_round1.md") + "\nYou asked with " + r.path);
        });
        const std::string host = "127.0.0.1:" + std::to_string(server.port());
        const std::string base =
            "http://kfuser:" + password + "@" + host + "/v1?api-key=" + urlKey + "&api-version=2024-10-21";
        auto g = llmGenerator(Protocol::OpenAI, server.url(), {{"base_url", base}, {"key_env", ""}});
        QVERIFY(g);
        Context c;
        QVERIFY(g->proposeIdeas(c.ctx, 2));
        // Used: the query after the path, the user and password as HTTP basic authentication.
        const ReplayRequest asked = server.requests().front();
        QCOMPARE(q(asked.path), q("/v1/chat/completions?api-key=" + urlKey + "&api-version=2024-10-21"));
        QVERIFY(q(asked.headers.at("authorization")).startsWith("Basic "));
        // Kept out of what is stored or shown.
        const Exchange &e = c.exchanges.front();
        QCOMPARE(e.endpoint, "http://" + host + "/v1/chat/completions?api-version=2024-10-21");
        QCOMPARE(g->settings()["base_url"].get<std::string>(), "http://" + host + "/v1?api-version=2024-10-21");
        auto failed = g->listModels();
        QVERIFY(!failed);
        for (const std::string &s :
             {e.endpoint, e.request, e.response, e.answer, e.error, g->settings().dump(), failed.error().text()}) {
            QVERIFY2(s.find(password) == std::string::npos, s.c_str());
            QVERIFY2(s.find(urlKey) == std::string::npos, s.c_str());
        }
        QVERIFY(q(e.answer).contains("api-key=***")); // the server's echo, scrubbed
        QVERIFY(llm::hasCredentials(base));
        QVERIFY(!llm::hasCredentials(g->settings()["base_url"].get<std::string>()));
    }
};

QTEST_GUILESS_MAIN(TestLlmKeys)
#include "test_llm_keys.moc"
