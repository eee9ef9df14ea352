#include "replay_server.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace kf::test {

namespace {

int listenOn(int &port, const std::string &address = "127.0.0.1", int backlog = 64)
{
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    if (::inet_pton(AF_INET, address.c_str(), &a.sin_addr) != 1) {
        ::close(fd);
        return -1;
    }
    a.sin_port = 0;
    socklen_t len = sizeof a;
    if (::bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 || ::listen(fd, backlog) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr *>(&a), &len) != 0) {
        ::close(fd);
        return -1;
    }
    port = ntohs(a.sin_port);
    return fd;
}

void sendAll(int fd, const std::string &data)
{
    std::size_t sent = 0;
    while (sent < data.size()) {
        const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
        if (n <= 0)
            return;
        sent += std::size_t(n);
    }
}

const char *reasonPhrase(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 401:
        return "Unauthorized";
    case 404:
        return "Not Found";
    case 408:
        return "Request Timeout";
    case 409:
        return "Conflict";
    case 429:
        return "Too Many Requests";
    case 500:
        return "Internal Server Error";
    case 529:
        return "Overloaded";
    default:
        return "Status";
    }
}

// CRC-32 (IEEE), which a gzip file ends with.
std::uint32_t crc32(const std::string &data)
{
    std::uint32_t table[256];
    for (std::uint32_t i = 0; i < 256; ++i) {
        std::uint32_t c = i;
        for (int k = 0; k < 8; ++k)
            c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        table[i] = c;
    }
    std::uint32_t crc = 0xFFFFFFFFu;
    for (unsigned char ch : data)
        crc = table[(crc ^ ch) & 0xFF] ^ (crc >> 8);
    return crc ^ 0xFFFFFFFFu;
}

void putLE(std::string &out, std::uint32_t v, int bytes)
{
    for (int i = 0; i < bytes; ++i)
        out += char((v >> (8 * i)) & 0xFF);
}

std::string chunk(const std::string &data)
{
    char size[16];
    std::snprintf(size, sizeof size, "%zx\r\n", data.size());
    return size + data + "\r\n";
}

// `data` cut into `n` pieces of about equal size.
std::vector<std::string> cut(const std::string &data, std::size_t n)
{
    std::vector<std::string> out;
    const std::size_t step = std::max<std::size_t>(1, (data.size() + n - 1) / std::max<std::size_t>(1, n));
    for (std::size_t at = 0; at < data.size(); at += step)
        out.push_back(data.substr(at, step));
    return out;
}

} // namespace

ReplayServer::ReplayServer(Handler handler, const std::string &address)
    : m_handler(std::move(handler)), m_address(address)
{
    m_fd = listenOn(m_port, address);
    if (m_fd >= 0)
        m_acceptor = std::thread([this] { acceptLoop(); });
}

ReplayServer::~ReplayServer() { stop(); }

void ReplayServer::stop()
{
    if (m_stop.exchange(true))
        return;
    if (m_acceptor.joinable())
        m_acceptor.join();
    if (m_fd >= 0)
        ::close(m_fd);
    std::vector<std::thread> connections;
    {
        std::lock_guard lock(m_mutex);
        connections.swap(m_connections);
    }
    for (auto &t : connections)
        t.join();
}

std::vector<ReplayRequest> ReplayServer::requests() const
{
    std::lock_guard lock(m_mutex);
    return m_requests;
}

void ReplayServer::acceptLoop()
{
    while (!m_stop) {
        pollfd p{m_fd, POLLIN, 0};
        if (::poll(&p, 1, 20) <= 0)
            continue;
        sockaddr_in peer{};
        socklen_t len = sizeof peer;
        const int c = ::accept4(m_fd, reinterpret_cast<sockaddr *>(&peer), &len, SOCK_CLOEXEC);
        if (c < 0)
            continue;
        const int peerPort = ntohs(peer.sin_port);
        std::lock_guard lock(m_mutex);
        m_connections.emplace_back([this, c, peerPort] { serve(c, peerPort); });
    }
}

void ReplayServer::serve(int fd, int peerPort)
{
    const int now = ++m_active;
    for (int seen = m_maxActive; now > seen && !m_maxActive.compare_exchange_weak(seen, now);) {}
    // Read the head, then as much body as Content-Length says.
    std::string data;
    char buf[8192];
    std::size_t headEnd = std::string::npos;
    std::size_t need = 0;
    while (!m_stop) {
        if (headEnd != std::string::npos && data.size() >= headEnd + 4 + need)
            break;
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 20) <= 0)
            continue;
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n <= 0)
            break;
        data.append(buf, std::size_t(n));
        if (headEnd == std::string::npos && (headEnd = data.find("\r\n\r\n")) != std::string::npos) {
            std::string head = data.substr(0, headEnd);
            std::transform(head.begin(), head.end(), head.begin(),
                           [](unsigned char ch) { return char(std::tolower(ch)); });
            if (auto at = head.find("content-length:"); at != std::string::npos)
                need = std::size_t(std::strtoull(head.c_str() + at + 15, nullptr, 10));
        }
    }
    ReplayRequest req;
    req.peerPort = peerPort;
    if (headEnd == std::string::npos) { // the client went away before asking anything
        ::close(fd);
        --m_active;
        return;
    }
    {
        std::istringstream head(data.substr(0, headEnd));
        std::string line;
        std::getline(head, line);
        std::istringstream first(line);
        first >> req.method >> req.path;
        while (std::getline(head, line)) {
            if (!line.empty() && line.back() == '\r')
                line.pop_back();
            const auto colon = line.find(':');
            if (colon == std::string::npos)
                continue;
            std::string name = line.substr(0, colon);
            std::transform(name.begin(), name.end(), name.begin(),
                           [](unsigned char ch) { return char(std::tolower(ch)); });
            std::string value = line.substr(colon + 1);
            value.erase(0, value.find_first_not_of(' '));
            req.headers[name] = value;
        }
        req.body = data.substr(headEnd + 4);
    }
    {
        std::lock_guard lock(m_mutex);
        m_requests.push_back(req);
    }
    ReplayReply reply = m_handler(req);
    auto wait = [&](int ms) {
        for (int waited = 0; (ms < 0 || waited < ms) && !m_stop; waited += 10)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
    };
    wait(reply.delayMs);
    std::string body = reply.body;
    std::vector<std::string> pieces = reply.pieces;
    std::ostringstream out;
    out << "HTTP/1.1 " << reply.status << " " << reasonPhrase(reply.status) << "\r\n";
    for (const auto &[k, v] : reply.headers)
        out << k << ": " << v << "\r\n";
    out << "Content-Type: " << reply.contentType << "\r\nConnection: close\r\n";
    const auto accepts = req.headers.find("accept-encoding");
    if (reply.gzip && accepts != req.headers.end() && accepts->second.find("gzip") != std::string::npos) {
        std::string whole = body;
        for (const auto &p : pieces)
            whole += p;
        body = gzipped(whole);
        if (!pieces.empty())
            pieces = cut(body, pieces.size());
        out << "Content-Encoding: gzip\r\n";
    }
    const bool chunked = !pieces.empty();
    if (chunked)
        out << "Transfer-Encoding: chunked\r\n\r\n";
    else
        out << "Content-Length: " << body.size() << "\r\n\r\n";
    // The head, then each piece after its wait; false when the client went away.
    auto sendPieces = [&] {
        sendAll(fd, out.str());
        for (const auto &p : pieces) {
            wait(reply.pieceDelayMs);
            if (m_stop)
                return;
            sendAll(fd, chunk(p));
        }
    };
    switch (reply.action) {
    case ReplayReply::Action::Respond:
        if (chunked) {
            sendPieces();
            sendAll(fd, "0\r\n\r\n");
        } else {
            sendAll(fd, out.str() + body);
        }
        break;
    case ReplayReply::Action::Hang:
        if (chunked)
            sendPieces();
        wait(-1); // until the server stops; the client's time-out or cancel ends it first
        break;
    case ReplayReply::Action::Drop:
        break;
    case ReplayReply::Action::PartialBody:
        sendAll(fd, out.str() + body.substr(0, body.size() / 2));
        break;
    }
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
    --m_active;
}

UnansweredPort::UnansweredPort()
{
    m_listen = listenOn(m_port, "127.0.0.1", 0);
    if (m_listen < 0)
        return;
    m_filler = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(std::uint16_t(m_port));
    if (m_filler >= 0 && ::connect(m_filler, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0) {
        ::close(m_filler);
        m_filler = -1;
    }
}

UnansweredPort::~UnansweredPort()
{
    if (m_filler >= 0)
        ::close(m_filler);
    if (m_listen >= 0)
        ::close(m_listen);
}

int tcpTimer(int localPort, int remotePort)
{
    std::ifstream in("/proc/net/tcp");
    std::string line;
    char local[16], remote[16];
    std::snprintf(local, sizeof local, ":%04X", localPort);
    std::snprintf(remote, sizeof remote, ":%04X", remotePort);
    std::getline(in, line); // the header
    while (std::getline(in, line)) {
        std::istringstream f(line);
        std::string slot, from, to, state, queues, timer;
        f >> slot >> from >> to >> state >> queues >> timer;
        auto endsWith = [](const std::string &s, const char *tail) {
            const std::size_t n = std::strlen(tail);
            return s.size() >= n && s.compare(s.size() - n, n, tail) == 0;
        };
        if (endsWith(from, local) && endsWith(to, remote))
            return std::atoi(timer.substr(0, timer.find(':')).c_str());
    }
    return -1;
}

int closedPort()
{
    int port = 0;
    const int fd = listenOn(port);
    if (fd >= 0)
        ::close(fd);
    return port;
}

namespace {

nlohmann::json openaiUsage(int promptTokens, int completionTokens)
{
    return {{"prompt_tokens", promptTokens},
            {"completion_tokens", completionTokens},
            {"total_tokens", promptTokens + completionTokens},
            {"completion_tokens_details", {{"reasoning_tokens", completionTokens / 5}}}};
}

std::string event(const std::string &name, const nlohmann::json &data)
{
    return (name.empty() ? std::string() : "event: " + name + "\n") + "data: " + data.dump() + "\n\n";
}

// Text in pieces of about 40 characters, as a model streams tokens.
std::vector<std::string> textPieces(const std::string &text) { return cut(text, text.size() / 40 + 1); }

} // namespace

std::string openaiMessage(const nlohmann::json &message, const std::string &finish)
{
    nlohmann::json j = {{"id", "chatcmpl-replay"},
                        {"object", "chat.completion"},
                        {"model", "replay-model"},
                        {"choices", {{{"index", 0}, {"message", message}, {"finish_reason", finish}}}},
                        {"usage", openaiUsage(1000, 500)}};
    return j.dump();
}

std::string openaiAnswer(const std::string &text, const std::string &finish, int promptTokens, int completionTokens)
{
    nlohmann::json j = {
        {"id", "chatcmpl-replay"},
        {"object", "chat.completion"},
        {"model", "replay-model"},
        {"choices",
         {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", text}}}, {"finish_reason", finish}}}},
        {"usage", openaiUsage(promptTokens, completionTokens)}};
    return j.dump();
}

std::vector<std::string> openaiEvents(const std::string &text, const std::string &finish, int promptTokens,
                                      int completionTokens)
{
    const nlohmann::json head = {
        {"id", "chatcmpl-replay"}, {"object", "chat.completion.chunk"}, {"model", "replay-model"}};
    auto chunkWith = [&](const nlohmann::json &delta, const nlohmann::json &reason) {
        nlohmann::json c = head;
        c["choices"] = {{{"index", 0}, {"delta", delta}, {"finish_reason", reason}}};
        return event("", c);
    };
    std::vector<std::string> out = {chunkWith({{"role", "assistant"}, {"content", ""}}, nullptr)};
    for (const auto &piece : textPieces(text))
        out.push_back(chunkWith({{"content", piece}}, nullptr));
    out.push_back(chunkWith(nlohmann::json::object(), finish));
    nlohmann::json usage = head;
    usage["choices"] = nlohmann::json::array();
    usage["usage"] = openaiUsage(promptTokens, completionTokens);
    out.push_back(event("", usage));
    out.push_back("data: [DONE]\n\n");
    return out;
}

std::vector<std::string> anthropicEvents(const std::string &text, const std::string &stop, int promptTokens,
                                         int completionTokens)
{
    std::vector<std::string> out;
    out.push_back(event("message_start",
                        {{"type", "message_start"},
                         {"message",
                          {{"id", "msg_replay"},
                           {"type", "message"},
                           {"role", "assistant"},
                           {"model", "replay-model"},
                           {"content", nlohmann::json::array()},
                           {"stop_reason", nullptr},
                           {"usage", {{"input_tokens", promptTokens}, {"output_tokens", 1}}}}}}));
    out.push_back(": keep-alive\n\n");
    out.push_back(event(
        "content_block_start",
        {{"type", "content_block_start"}, {"index", 0}, {"content_block", {{"type", "thinking"}, {"thinking", ""}}}}));
    for (const char *piece : {"Let me think about ", "the memory traffic."})
        out.push_back(event("content_block_delta",
                            {{"type", "content_block_delta"},
                             {"index", 0},
                             {"delta", {{"type", "thinking_delta"}, {"thinking", piece}}}}));
    out.push_back(event(
        "content_block_delta",
        {{"type", "content_block_delta"}, {"index", 0}, {"delta", {{"type", "signature_delta"}, {"signature", "x"}}}}));
    out.push_back(event("content_block_stop", {{"type", "content_block_stop"}, {"index", 0}}));
    out.push_back(event("ping", {{"type", "ping"}}));
    out.push_back(
        event("content_block_start",
              {{"type", "content_block_start"}, {"index", 1}, {"content_block", {{"type", "text"}, {"text", ""}}}}));
    for (const auto &piece : textPieces(text))
        out.push_back(event(
            "content_block_delta",
            {{"type", "content_block_delta"}, {"index", 1}, {"delta", {{"type", "text_delta"}, {"text", piece}}}}));
    out.push_back(event("content_block_stop", {{"type", "content_block_stop"}, {"index", 1}}));
    out.push_back(event("message_delta",
                        {{"type", "message_delta"},
                         {"delta", {{"stop_reason", stop}, {"stop_sequence", nullptr}}},
                         {"usage", {{"output_tokens", completionTokens}}}}));
    out.push_back(event("message_stop", {{"type", "message_stop"}}));
    return out;
}

ReplayReply streamed(std::vector<std::string> events, int delayMs)
{
    ReplayReply r;
    r.contentType = "text/event-stream";
    r.pieces = std::move(events);
    r.pieceDelayMs = delayMs;
    return r;
}

std::string gzipped(const std::string &data)
{
    std::string out = {'\x1f', '\x8b', 8, 0, 0, 0, 0, 0, 0, '\xff'}; // magic, deflate, no flags, no time, unknown OS
    constexpr std::size_t kBlock = 65535;                            // the largest stored block
    std::size_t at = 0;
    do {
        const std::size_t n = std::min(kBlock, data.size() - at);
        const bool last = at + n == data.size();
        out += char(last ? 1 : 0); // BFINAL, BTYPE 00 (stored)
        putLE(out, std::uint32_t(n), 2);
        putLE(out, std::uint32_t(~n & 0xFFFF), 2);
        out += data.substr(at, n);
        at += n;
    } while (at < data.size());
    putLE(out, crc32(data), 4);
    putLE(out, std::uint32_t(data.size()), 4);
    return out;
}

std::string httpDate(int seconds)
{
    const std::time_t when = std::time(nullptr) + seconds;
    std::tm utc{};
    ::gmtime_r(&when, &utc);
    char b[64];
    std::strftime(b, sizeof b, "%a, %d %b %Y %H:%M:%S GMT", &utc);
    return b;
}

std::string anthropicAnswer(const std::string &text, const std::string &stop, int promptTokens, int completionTokens)
{
    nlohmann::json j = {
        {"id", "msg_replay"},
        {"type", "message"},
        {"role", "assistant"},
        {"model", "replay-model"},
        {"content",
         {{{"type", "thinking"}, {"thinking", "Let me think about the memory traffic."}, {"signature", "x"}},
          {{"type", "text"}, {"text", text}}}},
        {"stop_reason", stop},
        {"usage", {{"input_tokens", promptTokens}, {"output_tokens", completionTokens}}}};
    return j.dump();
}

std::string userMessage(const ReplayRequest &r)
{
    auto j = nlohmann::json::parse(r.body, nullptr, false);
    if (j.is_discarded() || !j.contains("messages") || !j["messages"].is_array())
        return {};
    for (auto it = j["messages"].rbegin(); it != j["messages"].rend(); ++it)
        if ((*it).value("role", "") == "user" && (*it)["content"].is_string())
            return (*it)["content"].get<std::string>();
    return {};
}

std::string dataFile(const std::string &name)
{
    std::ifstream in(std::string(KF_SOURCE_DIR) + "/tests/data/llm/" + name, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

} // namespace kf::test
