#include "eval/compile_pool.h"

#include "eval/work_queue.h"

#include <algorithm>
#include <mutex>
#include <thread>

namespace kf {

CompilePool::CompilePool(CompilePoolConfig config) : m_config(std::move(config))
{
    if (m_config.argv.empty())
        m_config.argv = defaultWorkerArgv();
    if (std::find(m_config.argv.begin(), m_config.argv.end(), "--compile") == m_config.argv.end())
        m_config.argv.push_back("--compile");
    int processes = m_config.processes > 0 ? m_config.processes : int(std::thread::hardware_concurrency());
    processes = std::max(1, processes);
    for (int i = 0; i < processes; ++i) {
        WorkerConfig worker;
        worker.argv = m_config.argv;
        worker.env = m_config.env;
        worker.name = "compiler " + std::to_string(i + 1);
        worker.handshakeTimeout = m_config.handshakeTimeout;
        worker.compileTimeout = m_config.compileTimeout;
        m_clients.push_back(std::make_unique<WorkerClient>(std::move(worker)));
    }
}

CompilePool::~CompilePool()
{
    std::vector<std::thread> threads;
    for (auto &client : m_clients)
        threads.emplace_back([&client] { client->stop(); });
    for (auto &t : threads)
        t.join();
}

int CompilePool::restarts() const
{
    int total = 0;
    for (const auto &client : m_clients)
        total += client->restarts();
    return total;
}

void CompilePool::cancel()
{
    m_cancel = true;
    for (auto &client : m_clients)
        client->interrupt();
}

Result<CompileOutput> CompilePool::compile(const CompileJob &job) { return std::move(compileAll({job}).front()); }

std::vector<Result<CompileOutput>> CompilePool::compileAll(const std::vector<CompileJob> &jobs, ResultCallback onResult)
{
    m_cancel = false;
    std::vector<std::optional<Result<CompileOutput>>> results(jobs.size());
    std::mutex callbackMutex;
    auto finish = [&](std::size_t index, Result<CompileOutput> result) {
        results[index] = std::move(result);
        if (onResult) {
            std::lock_guard lock(callbackMutex);
            onResult(index, *results[index]);
        }
    };

    // Cache hits never wait for a process; only the misses are spread over the processes, and
    // no more processes start than there are misses.
    std::vector<std::size_t> misses;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        std::optional<CompileOutput> hit;
        if (m_config.cacheLookup)
            hit = m_config.cacheLookup(jobs[i]);
        if (hit) {
            hit->cached = true;
            finish(i, std::move(*hit));
        } else {
            misses.push_back(i);
        }
    }

    std::vector<Error> startErrors(m_clients.size());
    WorkQueueHooks hooks;
    hooks.run = [&](std::size_t worker, std::size_t item) {
        WorkerClient &client = *m_clients[worker];
        const CompileJob &job = jobs[misses[item]];
        if (auto started = client.start(); !started) {
            startErrors[worker] = started.error();
            return ItemOutcome::HandBack;
        }
        auto output = client.compile(job.source, job.kernels, job.arch);
        if (!output && output.error().code == ErrorCode::Protocol) {
            // A garbled reply is the compiler process's fault, not the source's: say so.
            Error e = output.error();
            e.message = "the compiler process failed: " + e.message;
            output = e;
        }
        finish(misses[item], std::move(output));
        return ItemOutcome::Done;
    };
    hooks.orphan = [&](std::size_t item) {
        Error error = makeError(ErrorCode::WorkerStart, "no compiler process could be started");
        for (const auto &e : startErrors)
            if (!e.message.empty())
                error = e;
        finish(misses[item], error);
    };
    hooks.stopping = [&] { return m_cancel.load(); };
    hooks.cancelled = [&](std::size_t item) {
        finish(misses[item], makeError(ErrorCode::Cancelled, "the compile was cancelled"));
    };
    WorkQueue::run(misses.size(), m_clients.size(), hooks);

    std::vector<Result<CompileOutput>> out;
    out.reserve(jobs.size());
    for (auto &r : results)
        out.push_back(r ? std::move(*r) : Result<CompileOutput>(makeError(ErrorCode::Internal, "no result")));
    return out;
}

} // namespace kf
