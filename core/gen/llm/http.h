#pragma once
// HTTP for the LLM generators: several requests at once over one libcurl multi handle, driven on
// the calling thread. An attempt ends on silence (no byte for timeoutSeconds), not on the length
// of the answer, so a streamed half-hour answer runs to its end; TCP keep-alive keeps idle
// connections open through NAT and firewalls. Failures are retried as the providers' own SDKs
// retry them (408, 409, 429, 5xx, lost connections, DNS and HTTP/2 errors) with exponential
// backoff and jitter, or after the wait the server asks for. A cancel flag aborts transfers in flight.
#include <atomic>
#include <functional>
#include <string>
#include <vector>

namespace kf::llm {

struct HttpRequest {
    bool post = true; // false: GET
    std::string url;
    std::vector<std::string> headers; // "Name: value"
    std::string body;
};

struct HttpOptions {
    double timeoutSeconds = 600; // the longest silence: no byte received for this long ends an attempt
    double maxTimeSeconds = 0;   // the longest attempt from start to the last byte; 0: no limit
    double connectTimeoutSeconds = 10;
    int retries = 3;             // further attempts after a retryable failure (see retryable())
    double backoffSeconds = 1;   // the first wait; doubled at each retry, less up to 25 % jitter
    double maxWaitSeconds = 120; // the longest single wait, a server's retry-after included
    int concurrency = 4;         // transfers at once
};

struct HttpResult {
    int status = 0;           // HTTP status of the last attempt, 0 when none came
    std::string body;         // its body (decoded when it came compressed)
    std::string contentType;  // its Content-Type ("text/event-stream" for a stream)
    std::string retryAfter;   // its retry-after header, if any (seconds or an HTTP date)
    std::string retryAfterMs; // its retry-after-ms header, if any
    std::string shouldRetry;  // its x-should-retry header ("true", "false"), if any
    int transport = 0;        // libcurl's code for the last attempt, 0 when the transfer completed
    std::string transportMessage;
    bool connected = false; // the last attempt reached the server (false: a connect time-out)
    bool silent = false;    // the last attempt ended on silence (timeoutSeconds)
    int attempts = 0;
    double latencyMs = 0; // from the first attempt's start to the end of the last
    bool cancelled = false;

    bool ok() const { return !cancelled && transport == 0 && status >= 200 && status < 300; }
};

// Runs every request, at most `concurrency` at a time. `done` is called on this thread as each
// one ends (success, final failure or cancel), with its index. Returns when all have ended; a set
// `cancel` aborts the transfers in flight and ends the waiting ones as cancelled within ~50 ms.
// Proxies come from the environment (http_proxy, https_proxy, NO_PROXY); a server on this machine
// is always reached directly.
void runRequests(const std::vector<HttpRequest> &requests, const HttpOptions &options, const std::atomic<bool> *cancel,
                 const std::function<void(std::size_t, HttpResult)> &done);

// "api.openai.com", "127.0.0.1:8080": what a message names (never credentials).
std::string hostOf(const std::string &url);

// Whether a failed attempt deserves another, as OpenAI's and Anthropic's SDKs decide: the
// server's x-should-retry when it says; 408, 409, 429 and 5xx; a connection refused, reset or
// never made (connect time-out), a name not resolved, an HTTP/2 stream error. Not: other 4xx, a
// 429 saying the quota is used up (it stays used up), a silence time-out (the next attempt would
// most likely wait as long), cancel.
bool retryable(const HttpResult &);

// A 429 whose error says the account's quota or credit is used up, not that requests came too fast.
bool quotaExhausted(const HttpResult &);

// A failed result in one sentence that names the server: "key rejected by api.openai.com (HTTP
// 401: Incorrect API key provided)", "no server at http://localhost:11434 (connection refused)".
std::string describeFailure(const HttpResult &, const std::string &url, const HttpOptions &);

// Wait before attempt `attempt` + 1 (attempt >= 1): the server's retry-after-ms or retry-after
// (seconds or an HTTP date) when it sent one, else backoffSeconds doubled per attempt and
// shortened by up to 25 % (`random` in [0, 1)), so that clients that failed together do not
// return together; never more than maxWaitSeconds.
double retryWaitSeconds(int attempt, const HttpResult &, const HttpOptions &, double random);

} // namespace kf::llm
