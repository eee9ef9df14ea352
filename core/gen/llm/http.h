#pragma once
// HTTP for the LLM generators: several requests at once over one libcurl multi handle, driven on
// the calling thread, with time-outs, retries with backoff on 429, 5xx and dropped connections
// (honouring Retry-After), and a cancel flag that aborts transfers in flight.
#include <atomic>
#include <functional>
#include <string>
#include <vector>

namespace kf::llm {

struct HttpRequest {
    bool post = true;                 // false: GET
    std::string url;
    std::vector<std::string> headers; // "Name: value"
    std::string body;
};

struct HttpOptions {
    double timeoutSeconds = 600;        // one attempt, from connect to the last byte
    double connectTimeoutSeconds = 10;
    int retries = 3;                    // further attempts after a 408, 429, 5xx or dropped connection
    double backoffSeconds = 2;          // the first wait; doubled at each retry
    double maxWaitSeconds = 120;        // the longest single wait, Retry-After included
    int concurrency = 4;                // transfers at once
};

struct HttpResult {
    int status = 0;                   // HTTP status of the last attempt, 0 when none came
    std::string body;                 // its body
    std::string retryAfter;           // its Retry-After header, if any
    int transport = 0;                // libcurl's code for the last attempt, 0 when the transfer completed
    std::string transportMessage;
    int attempts = 0;
    double latencyMs = 0;             // from the first attempt's start to the end of the last
    bool cancelled = false;

    bool ok() const { return !cancelled && transport == 0 && status >= 200 && status < 300; }
};

// Runs every request, at most `concurrency` at a time. `done` is called on this thread as each
// one ends (success, final failure or cancel), with its index. Returns when all have ended; a set
// `cancel` aborts the transfers in flight and ends the waiting ones as cancelled within ~50 ms.
void runRequests(const std::vector<HttpRequest> &requests, const HttpOptions &options,
                 const std::atomic<bool> *cancel, const std::function<void(std::size_t, HttpResult)> &done);

// "api.openai.com", "127.0.0.1:8080": what a message names.
std::string hostOf(const std::string &url);

// A failed result in one sentence that names the server: "key rejected by api.openai.com (HTTP
// 401: Incorrect API key provided)", "no server at http://localhost:11434 (connection refused)".
std::string describeFailure(const HttpResult &, const std::string &url, const HttpOptions &);

// Wait before attempt `attempt` + 1 (attempt >= 1), from the backoff and a Retry-After value
// (delay seconds or an HTTP date), capped by maxWaitSeconds.
double retryWaitSeconds(int attempt, const std::string &retryAfter, const HttpOptions &);

} // namespace kf::llm
