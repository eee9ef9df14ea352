#include "replay_server.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace kf::test {

namespace {

int listenOn(int &port)
{
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof a;
    if (::bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 || ::listen(fd, 64) != 0 ||
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
    case 200: return "OK";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 529: return "Overloaded";
    default: return "Status";
    }
}

} // namespace

ReplayServer::ReplayServer(Handler handler) : m_handler(std::move(handler))
{
    m_fd = listenOn(m_port);
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
        const int c = ::accept4(m_fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0)
            continue;
        std::lock_guard lock(m_mutex);
        m_connections.emplace_back([this, c] { serve(c); });
    }
}

void ReplayServer::serve(int fd)
{
    const int now = ++m_active;
    for (int seen = m_maxActive; now > seen && !m_maxActive.compare_exchange_weak(seen, now);) {
    }
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
            std::transform(head.begin(), head.end(), head.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
            if (auto at = head.find("content-length:"); at != std::string::npos)
                need = std::size_t(std::strtoull(head.c_str() + at + 15, nullptr, 10));
        }
    }
    ReplayRequest req;
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
            std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
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
    std::ostringstream out;
    out << "HTTP/1.1 " << reply.status << " " << reasonPhrase(reply.status) << "\r\n";
    for (const auto &[k, v] : reply.headers)
        out << k << ": " << v << "\r\n";
    out << "Content-Type: application/json\r\nConnection: close\r\nContent-Length: " << reply.body.size()
        << "\r\n\r\n";
    switch (reply.action) {
    case ReplayReply::Action::Respond:
        sendAll(fd, out.str() + reply.body);
        break;
    case ReplayReply::Action::Hang:
        wait(-1); // until the server stops; the client's time-out or cancel ends it first
        break;
    case ReplayReply::Action::Drop:
        break;
    case ReplayReply::Action::PartialBody:
        sendAll(fd, out.str() + reply.body.substr(0, reply.body.size() / 2));
        break;
    }
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
    --m_active;
}

int closedPort()
{
    int port = 0;
    const int fd = listenOn(port);
    if (fd >= 0)
        ::close(fd);
    return port;
}

std::string openaiAnswer(const std::string &text, const std::string &finish, int promptTokens, int completionTokens)
{
    nlohmann::json j = {
        {"id", "chatcmpl-replay"},
        {"object", "chat.completion"},
        {"model", "replay-model"},
        {"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", text}}}, {"finish_reason", finish}}}},
        {"usage",
         {{"prompt_tokens", promptTokens},
          {"completion_tokens", completionTokens},
          {"total_tokens", promptTokens + completionTokens},
          {"completion_tokens_details", {{"reasoning_tokens", completionTokens / 5}}}}}};
    return j.dump();
}

std::string anthropicAnswer(const std::string &text, const std::string &stop, int promptTokens, int completionTokens)
{
    nlohmann::json j = {{"id", "msg_replay"},
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
