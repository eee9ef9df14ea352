#pragma once
// A small HTTP/1.1 server on 127.0.0.1 for the LLM tests: each request goes to a handler that
// picks a recorded answer, or tells the server to hang (never answer), drop the connection after
// reading the request, or answer late, in pieces (chunked, a stream of server-sent events, a slow
// trickle) or gzip-compressed. One request per connection ("Connection: close"), one thread per
// connection, so concurrent requests really are concurrent.
#include <nlohmann/json.hpp>

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
    int peerPort = 0; // the client's port, to find its socket
};

struct ReplayReply {
    // Hang: send the head and any pieces, then nothing more until the server stops.
    enum class Action { Respond, Hang, Drop, PartialBody };
    Action action = Action::Respond;
    int status = 200;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string contentType = "application/json";
    std::string body;
    std::vector<std::string> pieces; // when given: the body, sent chunked, one piece at a time
    int pieceDelayMs = 0;            // wait before each piece
    bool gzip = false;               // compress the body when the request accepts gzip
    int delayMs = 0;                 // wait before answering
};

class ReplayServer {
public:
    using Handler = std::function<ReplayReply(const ReplayRequest &)>;
    // `address`: another loopback address (127.0.0.2) stands for a second host.
    explicit ReplayServer(Handler handler, const std::string &address = "127.0.0.1");
    ~ReplayServer();
    ReplayServer(const ReplayServer &) = delete;
    ReplayServer &operator=(const ReplayServer &) = delete;

    bool listening() const { return m_fd >= 0; }
    int port() const { return m_port; }
    std::string url() const { return "http://" + m_address + ":" + std::to_string(m_port); }
    std::vector<ReplayRequest> requests() const;
    int maxConcurrent() const { return m_maxActive; }
    void stop();

private:
    void acceptLoop();
    void serve(int fd, int peerPort);

    Handler m_handler;
    std::string m_address;
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

// A port on 127.0.0.1 that never answers a connection attempt: its listen queue is full (one
// connection made here and never accepted), so the kernel drops further SYNs and a client waits
// until its connect time-out.
class UnansweredPort {
public:
    UnansweredPort();
    ~UnansweredPort();
    UnansweredPort(const UnansweredPort &) = delete;
    UnansweredPort &operator=(const UnansweredPort &) = delete;
    bool ready() const { return m_filler >= 0; }
    std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port); }

private:
    int m_listen = -1, m_filler = -1, m_port = 0;
};

// The TCP timer Linux shows for this machine's connection from `localPort` to `remotePort` in
// /proc/net/tcp: 0 none, 1 retransmit, 2 keep-alive, 4 zero-window probe; -1 when not found.
int tcpTimer(int localPort, int remotePort);

// Recorded answers, wrapped in each protocol's response JSON with fixed token counts.
std::string openaiAnswer(const std::string &text, const std::string &finish = "stop", int promptTokens = 1000,
                         int completionTokens = 500);
// A chat completion with the given message object (a refusal, content null, ...).
std::string openaiMessage(const nlohmann::json &message, const std::string &finish);
std::string anthropicAnswer(const std::string &text, const std::string &stop = "end_turn", int promptTokens = 1000,
                            int completionTokens = 500);
// The same answers streamed as each server streams them: server-sent events with the text in
// pieces of about 40 characters, thinking first (Anthropic), the token counts last.
std::vector<std::string> openaiEvents(const std::string &text, const std::string &finish = "stop",
                                      int promptTokens = 1000, int completionTokens = 500);
std::vector<std::string> anthropicEvents(const std::string &text, const std::string &stop = "end_turn",
                                         int promptTokens = 1000, int completionTokens = 500);
// A reply that streams `events` (Content-Type text/event-stream), `delayMs` before each.
ReplayReply streamed(std::vector<std::string> events, int delayMs = 0);
// `data` as a gzip file (stored deflate blocks: what matters is that the client decodes it).
std::string gzipped(const std::string &data);
// An HTTP date `seconds` from now ("Wed, 03 Dec 2026 10:00:02 GMT"), for Retry-After.
std::string httpDate(int seconds);
// The user message of a request in either protocol ("" when there is none).
std::string userMessage(const ReplayRequest &);
// A file under tests/data/llm.
std::string dataFile(const std::string &name);

} // namespace kf::test
