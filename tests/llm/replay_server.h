#pragma once
// A small HTTP/1.1 server on 127.0.0.1 for the LLM tests: each request goes to a handler that
// picks a recorded answer, or tells the server to hang (never answer), drop the connection after
// reading the request, or answer late. One request per connection ("Connection: close"), one
// thread per connection, so concurrent requests really are concurrent.
#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace kf::test {

struct ReplayRequest {
    std::string method, path;
    std::map<std::string, std::string> headers; // names in lower case
    std::string body;
};

struct ReplayReply {
    enum class Action { Respond, Hang, Drop, PartialBody };
    Action action = Action::Respond;
    int status = 200;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    int delayMs = 0;       // wait before answering
};

class ReplayServer {
public:
    using Handler = std::function<ReplayReply(const ReplayRequest &)>;
    explicit ReplayServer(Handler handler);
    ~ReplayServer();
    ReplayServer(const ReplayServer &) = delete;
    ReplayServer &operator=(const ReplayServer &) = delete;

    bool listening() const { return m_fd >= 0; }
    int port() const { return m_port; }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port); }
    std::vector<ReplayRequest> requests() const;
    int maxConcurrent() const { return m_maxActive; }
    void stop();

private:
    void acceptLoop();
    void serve(int fd);

    Handler m_handler;
    int m_fd = -1;
    int m_port = 0;
    std::atomic<bool> m_stop{false};
    std::atomic<int> m_active{0}, m_maxActive{0};
    std::thread m_acceptor;
    mutable std::mutex m_mutex;
    std::vector<std::thread> m_connections;
    std::vector<ReplayRequest> m_requests;
};

// A port on 127.0.0.1 with nothing listening (bound, then closed), for "connection refused".
int closedPort();

// Recorded answers, wrapped in each protocol's response JSON with fixed token counts.
std::string openaiAnswer(const std::string &text, const std::string &finish = "stop", int promptTokens = 1000,
                         int completionTokens = 500);
std::string anthropicAnswer(const std::string &text, const std::string &stop = "end_turn", int promptTokens = 1000,
                            int completionTokens = 500);
// The user message of a request in either protocol ("" when there is none).
std::string userMessage(const ReplayRequest &);
// A file under tests/data/llm.
std::string dataFile(const std::string &name);

} // namespace kf::test
