#include "gen/llm/http.h"

#include <curl/curl.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <deque>
#include <map>
#include <memory>
#include <mutex>

namespace kf::llm {

namespace {

using Clock = std::chrono::steady_clock;
// How long one poll waits at most: the cancel flag and retry timers are looked at this often.
constexpr int kPollMs = 50;
// An answer larger than this is not a chat completion; stop reading instead of filling memory.
constexpr std::size_t kMaxBody = 64u << 20;

void initCurl()
{
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

// 501 (not implemented) and 505 (version not supported) will not change on a retry.
bool retryableStatus(int status)
{
    return status == 429 || status == 408 || (status >= 500 && status <= 599 && status != 501 && status != 505);
}

// A time-out is not retried: a server that did not answer within the time-out (minutes, for a
// model) will most likely not answer the same request the next time either, and each retry would
// cost the whole time-out again.
bool retryableTransport(int code)
{
    switch (code) {
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
        return true;
    default:
        return false;
    }
}

struct Transfer {
    std::size_t index = 0;
    CURL *easy = nullptr;
    curl_slist *headers = nullptr;
    HttpResult result;
    Clock::time_point firstStart{};
    Clock::time_point notBefore{};
    bool started = false;
    char errorBuffer[CURL_ERROR_SIZE] = {};

    ~Transfer()
    {
        if (easy)
            curl_easy_cleanup(easy);
        if (headers)
            curl_slist_free_all(headers);
    }
};

size_t onBody(char *data, size_t size, size_t count, void *user)
{
    auto *t = static_cast<Transfer *>(user);
    const size_t n = size * count;
    if (t->result.body.size() + n > kMaxBody)
        return 0; // makes libcurl stop with a write error
    t->result.body.append(data, n);
    return n;
}

size_t onHeader(char *data, size_t size, size_t count, void *user)
{
    auto *t = static_cast<Transfer *>(user);
    const size_t n = size * count;
    std::string line(data, n);
    const std::string name = "retry-after:";
    if (line.size() > name.size()) {
        std::string head = line.substr(0, name.size());
        std::transform(head.begin(), head.end(), head.begin(), [](unsigned char c) { return char(std::tolower(c)); });
        if (head == name) {
            std::string v = line.substr(name.size());
            v.erase(0, v.find_first_not_of(" \t"));
            v.erase(v.find_last_not_of(" \t\r\n") + 1);
            t->result.retryAfter = v;
        }
    }
    return n;
}

void setUp(Transfer &t, const HttpRequest &r, const HttpOptions &o)
{
    if (t.easy)
        curl_easy_cleanup(t.easy);
    t.easy = curl_easy_init();
    CURL *e = t.easy;
    t.result.body.clear();
    t.result.retryAfter.clear();
    t.result.status = 0;
    t.result.transport = 0;
    t.result.transportMessage.clear();
    t.errorBuffer[0] = 0;
    curl_easy_setopt(e, CURLOPT_URL, r.url.c_str());
    curl_easy_setopt(e, CURLOPT_PRIVATE, &t);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t.errorBuffer);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, onBody);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, onHeader);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, &t);
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, long(o.timeoutSeconds * 1000));
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, long(o.connectTimeoutSeconds * 1000));
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
    // A server on this machine (Ollama, vLLM, llama.cpp) is never reached through a proxy that the
    // environment names for the outside world.
    curl_easy_setopt(e, CURLOPT_NOPROXY, "localhost,127.0.0.1,::1");
    if (r.post) {
        curl_easy_setopt(e, CURLOPT_POST, 1L);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, r.body.c_str());
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(r.body.size()));
    } else {
        curl_easy_setopt(e, CURLOPT_HTTPGET, 1L);
    }
    if (!t.headers)
        for (const auto &h : r.headers)
            t.headers = curl_slist_append(t.headers, h.c_str());
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, t.headers);
}

double msSince(Clock::time_point start)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

} // namespace

double retryWaitSeconds(int attempt, const std::string &retryAfter, const HttpOptions &o)
{
    double wait = o.backoffSeconds * std::pow(2.0, std::max(0, attempt - 1));
    if (!retryAfter.empty()) {
        char *end = nullptr;
        const double seconds = std::strtod(retryAfter.c_str(), &end);
        if (end && *end == 0 && seconds >= 0) {
            wait = std::max(wait, seconds);
        } else {
            const time_t when = curl_getdate(retryAfter.c_str(), nullptr);
            if (when > 0)
                wait = std::max(wait, double(when - std::time(nullptr)));
        }
    }
    return std::clamp(wait, 0.0, o.maxWaitSeconds);
}

void runRequests(const std::vector<HttpRequest> &requests, const HttpOptions &options,
                 const std::atomic<bool> *cancel, const std::function<void(std::size_t, HttpResult)> &done)
{
    initCurl();
    std::unique_ptr<CURLM, decltype(&curl_multi_cleanup)> multi(curl_multi_init(), curl_multi_cleanup);
    std::vector<std::unique_ptr<Transfer>> transfers;
    std::deque<Transfer *> ready;   // waiting for a free slot, in order
    std::vector<Transfer *> waiting; // waiting for a retry time
    std::map<CURL *, Transfer *> active;
    for (std::size_t i = 0; i < requests.size(); ++i) {
        transfers.push_back(std::make_unique<Transfer>());
        transfers.back()->index = i;
        ready.push_back(transfers.back().get());
    }
    const int limit = std::max(1, options.concurrency);
    auto finish = [&](Transfer *t) {
        if (t->started)
            t->result.latencyMs = msSince(t->firstStart);
        done(t->index, std::move(t->result));
    };

    while (!ready.empty() || !waiting.empty() || !active.empty()) {
        if (cancel && *cancel) {
            for (auto &[easy, t] : active) {
                curl_multi_remove_handle(multi.get(), easy);
                t->result.cancelled = true;
                finish(t);
            }
            for (Transfer *t : waiting) {
                t->result.cancelled = true;
                finish(t);
            }
            for (Transfer *t : ready) {
                t->result.cancelled = true;
                finish(t);
            }
            return;
        }
        const auto now = Clock::now();
        for (auto it = waiting.begin(); it != waiting.end();) {
            if ((*it)->notBefore <= now) {
                ready.push_front(*it); // a retry goes before requests not yet started
                it = waiting.erase(it);
            } else {
                ++it;
            }
        }
        while (int(active.size()) < limit && !ready.empty()) {
            Transfer *t = ready.front();
            ready.pop_front();
            setUp(*t, requests[t->index], options);
            if (!t->started) {
                t->started = true;
                t->firstStart = Clock::now();
            }
            ++t->result.attempts;
            curl_multi_add_handle(multi.get(), t->easy);
            active[t->easy] = t;
        }

        int running = 0;
        curl_multi_perform(multi.get(), &running);
        int left = 0;
        while (CURLMsg *m = curl_multi_info_read(multi.get(), &left)) {
            if (m->msg != CURLMSG_DONE)
                continue;
            CURL *easy = m->easy_handle;
            auto it = active.find(easy);
            if (it == active.end())
                continue;
            Transfer *t = it->second;
            active.erase(it);
            curl_multi_remove_handle(multi.get(), easy);
            long status = 0;
            curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
            t->result.transport = int(m->data.result);
            t->result.status = m->data.result == CURLE_OK ? int(status) : 0;
            if (m->data.result != CURLE_OK)
                t->result.transportMessage = t->errorBuffer[0] ? t->errorBuffer : curl_easy_strerror(m->data.result);
            const bool retry = t->result.attempts <= options.retries &&
                               (t->result.transport != 0 ? retryableTransport(t->result.transport)
                                                         : retryableStatus(t->result.status));
            if (retry) {
                const double wait = retryWaitSeconds(t->result.attempts, t->result.retryAfter, options);
                t->notBefore = Clock::now() + std::chrono::milliseconds(std::int64_t(wait * 1000));
                waiting.push_back(t);
            } else {
                finish(t);
            }
        }
        if (!active.empty() || !ready.empty()) {
            int fds = 0;
            curl_multi_poll(multi.get(), nullptr, 0, kPollMs, &fds);
        } else if (!waiting.empty()) {
            int fds = 0;
            curl_multi_poll(multi.get(), nullptr, 0, kPollMs, &fds); // nothing to watch: a plain wait
        }
    }
}

std::string hostOf(const std::string &url)
{
    std::string rest = url;
    if (auto p = rest.find("://"); p != std::string::npos)
        rest = rest.substr(p + 3);
    rest = rest.substr(0, rest.find('/'));
    if (auto at = rest.rfind('@'); at != std::string::npos) // never name credentials in a URL
        rest = rest.substr(at + 1);
    return rest;
}

namespace {

// The server's own words, from the usual JSON error shapes, or the start of a short plain body.
std::string serverMessage(const std::string &body)
{
    auto j = nlohmann::json::parse(body, nullptr, false);
    std::string msg;
    if (!j.is_discarded() && j.is_object()) {
        auto e = j.find("error");
        if (e != j.end() && e->is_object() && e->contains("message") && (*e)["message"].is_string())
            msg = (*e)["message"].get<std::string>();
        else if (e != j.end() && e->is_string())
            msg = e->get<std::string>();
        else if (j.contains("message") && j["message"].is_string())
            msg = j["message"].get<std::string>();
        else if (j.contains("detail") && j["detail"].is_string())
            msg = j["detail"].get<std::string>();
    } else if (body.size() < 300 && body.find('<') == std::string::npos) {
        msg = body;
    }
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == '\r' || msg.back() == ' '))
        msg.pop_back();
    if (msg.size() > 300)
        msg = msg.substr(0, 300) + "...";
    return msg;
}

std::string origin(const std::string &url)
{
    const auto scheme = url.find("://");
    const std::string s = scheme == std::string::npos ? std::string() : url.substr(0, scheme + 3);
    return s + hostOf(url);
}

std::string seconds(double s)
{
    char b[32];
    std::snprintf(b, sizeof b, "%g s", s);
    return b;
}

} // namespace

std::string describeFailure(const HttpResult &r, const std::string &url, const HttpOptions &o)
{
    if (r.cancelled)
        return "cancelled";
    const std::string host = hostOf(url);
    std::string text;
    if (r.transport != 0) {
        switch (r.transport) {
        case CURLE_COULDNT_CONNECT: text = "no server at " + origin(url) + " (connection refused)"; break;
        case CURLE_COULDNT_RESOLVE_HOST: text = "cannot find the host " + host + " (name not resolved)"; break;
        case CURLE_OPERATION_TIMEDOUT: text = "no answer from " + host + " within " + seconds(o.timeoutSeconds); break;
        case CURLE_GOT_NOTHING:
        case CURLE_RECV_ERROR:
        case CURLE_SEND_ERROR:
        case CURLE_PARTIAL_FILE:
            text = host + " closed the connection before the answer was complete";
            break;
        case CURLE_WRITE_ERROR: text = "the answer from " + host + " is larger than 64 MiB"; break;
        case CURLE_SSL_CONNECT_ERROR:
        case CURLE_PEER_FAILED_VERIFICATION:
            text = "TLS with " + host + " failed (" + r.transportMessage + ")";
            break;
        case CURLE_URL_MALFORMAT:
        case CURLE_UNSUPPORTED_PROTOCOL: text = "not a usable URL: " + url; break;
        default: text = "the request to " + host + " failed (" + r.transportMessage + ")"; break;
        }
    } else {
        const std::string said = serverMessage(r.body);
        const std::string http = "HTTP " + std::to_string(r.status) + (said.empty() ? "" : ": " + said);
        if (r.status == 401)
            text = "key rejected by " + host + " (" + http + ")";
        else if (r.status == 403)
            text = "access denied by " + host + " (" + http + ")";
        else if (r.status == 404)
            text = url + " not found on " + host + " (" + http + "); check the base URL and the model name";
        else if (r.status == 429)
            text = "rate limited by " + host + " (" + http + ")";
        else if (r.status >= 500)
            text = host + " failed (" + http + ")";
        else if (r.status >= 400)
            text = host + " refused the request (" + http + ")";
        else
            text = host + " answered HTTP " + std::to_string(r.status);
    }
    if (r.attempts > 1)
        text += ", after " + std::to_string(r.attempts) + " attempts";
    return text;
}

} // namespace kf::llm
