#pragma once
// NVRTC compiles in parallel. NVRTC 13 serialises compiles within one process, so the pool runs
// several `kernelforge-worker --compile` processes (the worker protocol, with only the hello and
// compile ops), started on first use and kept for the next batch. A compiler process that crashes
// or hangs fails only its own source (as a compile error saying so) and is replaced.
#include "eval/worker_client.h"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kf {

struct CompileJob {
    std::string source;
    std::vector<std::string> kernels;
    std::string arch = "sm_90a";
};

struct CompilePoolConfig {
    std::vector<std::string> argv; // the worker command; "--compile" is appended. Empty: defaultWorkerArgv()
    std::vector<std::string> env;
    int processes = 0; // 0: std::thread::hardware_concurrency()
    milliseconds handshakeTimeout{30'000};
    milliseconds compileTimeout{180'000};
    // Looked up before a job goes to a process (the compiler's disk cache); nullopt is a miss.
    // The processes use the same cache themselves, so this only saves the round trip.
    std::function<std::optional<CompileOutput>(const CompileJob &)> cacheLookup;
};

class CompilePool {
public:
    explicit CompilePool(CompilePoolConfig config = {});
    ~CompilePool();
    CompilePool(const CompilePool &) = delete;
    CompilePool &operator=(const CompilePool &) = delete;

    std::size_t size() const { return m_clients.size(); } // the most processes it runs
    int restarts() const;                                 // processes replaced after a crash or hang

    Result<CompileOutput> compile(const CompileJob &);
    // Results in the order of `jobs`; `onResult` is called once per job, never two at a time.
    // An Error means no process could compile it (the worker is missing, say).
    using ResultCallback = std::function<void(std::size_t index, const Result<CompileOutput> &)>;
    std::vector<Result<CompileOutput>> compileAll(const std::vector<CompileJob> &jobs, ResultCallback onResult = {});
    void cancel(); // from another thread: the rest come back as Error "cancelled"

private:
    CompilePoolConfig m_config;
    std::vector<std::unique_ptr<WorkerClient>> m_clients; // started lazily
    std::atomic<bool> m_cancel{false};
};

} // namespace kf
