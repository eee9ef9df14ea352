#include "gen/llm/http.h"

#include "gen/llm/url.h"

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
#include <random>

namespace kf::llm {

namespace {

using Clock = std::chrono::steady_clock;
// How long one poll waits at most: the cancel flag, silence and retry timers are looked at this often.
constexpr int kPollMs = 50;
// An answer larger than this is not a chat completion; stop reading instead of filling memory.
constexpr std::size_t kMaxBody = 64u << 20;
// TCP keep-alive probes on an idle connection: the first after 30 s, then every 15 s. NAT tables
// and firewalls drop connections silent for minutes, and a reasoning model may think for longer
// than that before its first token.
constexpr long kKeepIdleSeconds = 30, kKeepIntervalSeconds = 15;

void initCurl()
{
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    return s;
}

// The hosts libcurl reaches without a proxy: the environment's NO_PROXY (libcurl reads it only
// when CURLOPT_NOPROXY is not set) and this machine, where Ollama, vLLM or llama.cpp may listen.
std::string noProxy()
{
    const char *env = std::getenv("NO_PROXY");
    if (!env || !*env)
        env = std::getenv("no_proxy");
    const std::string local = "localhost,127.0.0.1,::1";
    if (!env || !*env)
        return local;
    if (std::string(env) == "*") // everything direct; "*" only means that alone in the list
        return "*";
    return std::string(env) + "," + local;
}

struct Transfer {
    std::size_t index = 0;
    CURL *easy = nullptr;
    curl_slist *headers = nullptr;
    HttpResult result;
    Clock::time_point firstStart{};
    Clock::time_point notBefore{};
    Clock::time_point lastByte{}; // the last time anything arrived (or the attempt started)
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
    t->lastByte = Clock::now();
    if (t->result.body.size() + n > kMaxBody)
        return 0; // makes libcurl stop with a write error
    t->result.body.append(data, n);
    return n;
}

size_t onHeader(char *data, size_t size, size_t count, void *user)
{
    auto *t = static_cast<Transfer *>(user);
    const size_t n = size * count;
    t->lastByte = Clock::now();
    const std::string line(data, n);
    const auto colon = line.find(':');
    if (colon == std::string::npos)
        return n;
    const std::string name = lower(line.substr(0, colon));
    std::string v = line.substr(colon + 1);
    v.erase(0, v.find_first_not_of(" \t"));
    v.erase(v.find_last_not_of(" \t\r\n") + 1);
    if (name == "retry-after")
        t->result.retryAfter = v;
    else if (name == "retry-after-ms")
        t->result.retryAfterMs = v;
    else if (name == "x-should-retry")
        t->result.shouldRetry = lower(v);
    return n;
}

void setUp(Transfer &t, const HttpRequest &r, const HttpOptions &o)
{
    if (t.easy)
        curl_easy_cleanup(t.easy);
    t.easy = curl_easy_init();
    CURL *e = t.easy;
    HttpResult &res = t.result;
    res.body.clear();
    res.contentType.clear();
    res.retryAfter.clear();
    res.retryAfterMs.clear();
    res.shouldRetry.clear();
    res.status = 0;
    res.transport = 0;
    res.transportMessage.clear();
    res.connected = false;
    res.silent = false;
    t.errorBuffer[0] = 0;
    t.lastByte = Clock::now();
    curl_easy_setopt(e, CURLOPT_URL, r.url.c_str());
    curl_easy_setopt(e, CURLOPT_PRIVATE, &t);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t.errorBuffer);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, onBody);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &t);
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, onHeader);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, &t);
    // Silence is watched by runRequests itself; this is only the optional cap on a whole attempt.
    curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, long(o.maxTimeSeconds * 1000));
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, long(o.connectTimeoutSeconds * 1000));
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPIDLE, kKeepIdleSeconds);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPINTVL, kKeepIntervalSeconds);
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, ""); // every encoding libcurl decodes (gzip, ...)
    // A redirect would carry the key's header to wherever the server points.
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(e, CURLOPT_NOPROXY, noProxy().c_str());
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

bool connectedNow(CURL *easy)
{
    curl_off_t us = 0;
    return curl_easy_getinfo(easy, CURLINFO_CONNECT_TIME_T, &us) == CURLE_OK && us > 0;
}

// Fills in how an attempt ended: `code` from libcurl, or a silence time-out.
void record(Transfer &t, CURLcode code, bool silent)
{
    HttpResult &r = t.result;
    long status = 0;
    curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &status);
    char *type = nullptr;
    if (curl_easy_getinfo(t.easy, CURLINFO_CONTENT_TYPE, &type) == CURLE_OK && type)
        r.contentType = type;
    r.connected = connectedNow(t.easy);
    r.silent = silent;
    r.transport = int(code);
    r.status = code == CURLE_OK ? int(status) : 0;
    if (silent)
        r.transportMessage = "nothing received";
    else if (code != CURLE_OK)
        r.transportMessage = t.errorBuffer[0] ? t.errorBuffer : curl_easy_strerror(code);
}

double jitter()
{
    thread_local std::mt19937 engine{std::random_device{}()};
    return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
}

// A number of seconds from a header value, or a negative number when it is none.
double headerSeconds(const std::string &value, double scale)
{
    if (value.empty())
        return -1;
    char *end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (end && end != value.c_str() && *end == 0 && v >= 0)
        return v * scale;
    return -1;
}

} // namespace

bool quotaExhausted(const HttpResult &r)
{
    if (r.status != 429)
        return false;
    auto j = nlohmann::json::parse(r.body, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("error") || !j["error"].is_object())
        return false;
    const auto &e = j["error"];
    for (const char *k : {"code", "type"})
        if (e.contains(k) && e[k].is_string() && e[k].get<std::string>() == "insufficient_quota")
            return true;
    return false;
}

bool retryable(const HttpResult &r)
{
    if (r.cancelled)
        return false;
    if (r.transport != 0) {
        switch (r.transport) {
        case CURLE_OPERATION_TIMEDOUT:
            return !r.connected; // a connect time-out; silence and max time are final
        case CURLE_COULDNT_RESOLVE_HOST:
        case CURLE_COULDNT_RESOLVE_PROXY:
        case CURLE_COULDNT_CONNECT:
        case CURLE_SSL_CONNECT_ERROR:
        case CURLE_GOT_NOTHING:
        case CURLE_RECV_ERROR:
        case CURLE_SEND_ERROR:
        case CURLE_PARTIAL_FILE:
        case CURLE_HTTP2:
        case CURLE_HTTP2_STREAM:
            return true;
        default:
            return false;
        }
    }
    if (r.shouldRetry == "true")
        return true;
    if (r.shouldRetry == "false")
        return false;
    if (r.status == 429)
        return !quotaExhausted(r);
    return r.status == 408 || r.status == 409 || r.status >= 500;
}

double retryWaitSeconds(int attempt, const HttpResult &r, const HttpOptions &o, double random)
{
    double asked = headerSeconds(r.retryAfterMs, 0.001);
    if (asked < 0)
        asked = headerSeconds(r.retryAfter, 1);
    if (asked < 0 && !r.retryAfter.empty()) {
        const time_t when = curl_getdate(r.retryAfter.c_str(), nullptr);
        if (when > 0)
            asked = std::max(0.0, double(when - std::time(nullptr)));
    }
    if (asked >= 0)
        return std::min(asked, o.maxWaitSeconds);
    const double backoff = std::min(o.backoffSeconds * std::pow(2.0, std::max(0, attempt - 1)), o.maxWaitSeconds);
    return backoff * (1.0 - 0.25 * std::clamp(random, 0.0, 1.0));
}

void runRequests(const std::vector<HttpRequest> &requests, const HttpOptions &options, const std::atomic<bool> *cancel,
                 const std::function<void(std::size_t, HttpResult)> &done)
{
    initCurl();
    std::unique_ptr<CURLM, decltype(&curl_multi_cleanup)> multi(curl_multi_init(), curl_multi_cleanup);
    std::vector<std::unique_ptr<Transfer>> transfers;
    std::deque<Transfer *> ready;    // waiting for a free slot, in order
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
    // An attempt that ended: retried after its wait, or finished.
    auto ended = [&](Transfer *t, CURLcode code, bool silent) {
        active.erase(t->easy);
        curl_multi_remove_handle(multi.get(), t->easy);
        record(*t, code, silent);
        if (t->result.attempts <= options.retries && !t->result.ok() && retryable(t->result)) {
            const double wait = retryWaitSeconds(t->result.attempts, t->result, options, jitter());
            t->notBefore = Clock::now() + std::chrono::milliseconds(std::int64_t(wait * 1000));
            waiting.push_back(t);
        } else {
            finish(t);
        }
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
            auto it = active.find(m->easy_handle);
            if (it != active.end())
                ended(it->second, m->data.result, false);
        }
        // Silence counts from the connection: connecting has its own time-out.
        std::vector<Transfer *> silent;
        const auto checked = Clock::now();
        const auto limitSilence = std::chrono::duration<double>(options.timeoutSeconds);
        for (auto &[easy, t] : active) {
            if (!connectedNow(easy))
                t->lastByte = checked;
            else if (checked - t->lastByte > limitSilence)
                silent.push_back(t);
        }
        for (Transfer *t : silent)
            ended(t, CURLE_OPERATION_TIMEDOUT, true);
        int fds = 0;
        // With nothing active this is a plain wait for the next retry time.
        curl_multi_poll(multi.get(), nullptr, 0, kPollMs, &fds);
    }
}

std::string hostOf(const std::string &url)
{
    Url u;
    return parseUrl(url, u) ? u.authority() : std::string();
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
    Url u;
    return parseUrl(url, u) ? u.scheme + "://" + u.authority() : publicUrl(url);
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
        case CURLE_COULDNT_CONNECT:
            text = "no server at " + origin(url) + " (connection refused)";
            break;
        case CURLE_COULDNT_RESOLVE_HOST:
            text = "cannot find the host " + host + " (name not resolved)";
            break;
        case CURLE_COULDNT_RESOLVE_PROXY:
            text = "cannot find the proxy for " + host + " (name not resolved)";
            break;
        case CURLE_HTTP2:
        case CURLE_HTTP2_STREAM:
            text = "HTTP/2 with " + host + " failed (" + r.transportMessage + ")";
            break;
        case CURLE_OPERATION_TIMEDOUT:
            if (!r.connected)
                text = "could not connect to " + host + " within " + seconds(o.connectTimeoutSeconds);
            else if (r.silent)
                text = "no answer from " + host + ": nothing arrived for " + seconds(o.timeoutSeconds);
            else
                text = "the answer from " + host + " took longer than " + seconds(o.maxTimeSeconds);
            break;
        case CURLE_GOT_NOTHING:
        case CURLE_RECV_ERROR:
        case CURLE_SEND_ERROR:
        case CURLE_PARTIAL_FILE:
            text = host + " closed the connection before the answer was complete";
            break;
        case CURLE_WRITE_ERROR:
            text = "the answer from " + host + " is larger than 64 MiB";
            break;
        case CURLE_SSL_CONNECT_ERROR:
        case CURLE_PEER_FAILED_VERIFICATION:
            text = "TLS with " + host + " failed (" + r.transportMessage + ")";
            break;
        case CURLE_URL_MALFORMAT:
        case CURLE_UNSUPPORTED_PROTOCOL:
            text = "not a usable URL: " + publicUrl(url);
            break;
        default:
            text = "the request to " + host + " failed (" + r.transportMessage + ")";
            break;
        }
    } else {
        const std::string said = serverMessage(r.body);
        const std::string http = "HTTP " + std::to_string(r.status) + (said.empty() ? "" : ": " + said);
        if (r.status == 401)
            text = "key rejected by " + host + " (" + http + ")";
        else if (r.status == 403)
            text = "access denied by " + host + " (" + http + ")";
        else if (r.status == 404)
            text = publicUrl(url) + " not found on " + host + " (" + http + "); check the base URL and the model name";
        else if (quotaExhausted(r))
            text = "the quota at " + host + " is used up (" + http + "); not retried";
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
