#include "eval/worker_pool.h"

#include "eval/work_queue.h"
#include "kernel/candidate.h"

#include <filesystem>
#include <thread>

namespace kf {

namespace {

// Runs f(i) for every i on its own thread and waits for all of them.
template <typename F>
void forEachParallel(std::size_t n, F f)
{
    std::vector<std::thread> threads;
    threads.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
        threads.emplace_back([&f, i] { f(i); });
    for (auto &t : threads)
        t.join();
}

EvalResult unfinished(const EvalRequest &request, Verdict verdict, std::string reason)
{
    EvalResult result;
    result.verdict = verdict;
    result.reason = std::move(reason);
    result.policy = request.policy;
    if (auto candidate = parseCandidate(request.source); candidate)
        result.precision = candidate->precision;
    return result;
}

} // namespace

WorkerPool::WorkerPool(PoolConfig config) : m_config(std::move(config))
{
    if (m_config.gpus.empty())
        m_config.gpus = {0};
    int perGpu = std::max(1, m_config.workersPerGpu);
    for (int gpu : m_config.gpus) {
        m_gpuLocks.try_emplace(gpu, std::make_unique<GpuLock>());
        for (int k = 0; k < perGpu; ++k) {
            WorkerConfig worker = m_config.worker;
            if (m_config.setVisibleDevices)
                worker.env.push_back("CUDA_VISIBLE_DEVICES=" + std::to_string(gpu));
            // Workers sharing a GPU each plan their verification for their share of its memory.
            if (perGpu > 1)
                worker.env.push_back("KERNELFORGE_WORKERS_PER_GPU=" + std::to_string(perGpu));
            worker.name = "gpu " + std::to_string(gpu) + (perGpu > 1 ? " worker " + std::to_string(k + 1) : "");
            m_slots.push_back(Slot{std::make_unique<WorkerClient>(std::move(worker)), gpu});
        }
    }
}

WorkerPool::~WorkerPool()
{
    // Workers quit in parallel: each may take a moment to exit.
    forEachParallel(m_slots.size(), [&](std::size_t i) { m_slots[i].client->stop(); });
}

Status WorkerPool::start()
{
    std::vector<std::optional<Error>> errors(m_slots.size());
    forEachParallel(m_slots.size(), [&](std::size_t i) {
        if (auto started = m_slots[i].client->start(); !started)
            errors[i] = started.error();
    });
    m_startErrors.clear();
    for (auto &e : errors)
        if (e)
            m_startErrors.push_back(*e);
    if (!m_slots.empty() && m_startErrors.size() == m_slots.size())
        return m_startErrors.front();
    return Ok{};
}

void WorkerPool::stop()
{
    forEachParallel(m_slots.size(), [&](std::size_t i) { m_slots[i].client->stop(); });
}

Status WorkerPool::load(const Problem &problem)
{
    m_problem = problem;
    std::vector<std::optional<Error>> errors(m_slots.size());
    forEachParallel(m_slots.size(), [&](std::size_t i) {
        if (auto loaded = m_slots[i].client->load(problem); !loaded)
            errors[i] = loaded.error();
    });
    for (auto &e : errors)
        if (e)
            return *e;
    return Ok{};
}

Result<BaselineResult> WorkerPool::baseline(int trials)
{
    if (m_slots.empty())
        return makeError(ErrorCode::Worker, "the pool has no workers");
    Slot &slot = m_slots.front();
    Result<BaselineResult> result = [&] {
        std::lock_guard lock(gpuLock(slot.gpu)); // a timing like any other
        return slot.client->baseline(trials);
    }();
    if (result)
        for (auto &s : m_slots)
            s.client->setBaselineMs(result->timing.medianMs);
    return result;
}

Result<Ceilings> WorkerPool::ceilings()
{
    std::vector<std::optional<Result<Ceilings>>> results(m_slots.size());
    forEachParallel(m_slots.size(), [&](std::size_t i) {
        std::lock_guard lock(gpuLock(m_slots[i].gpu)); // measuring them is a benchmark too
        results[i] = m_slots[i].client->ceilings();
    });
    for (auto &r : results)
        if (r && !*r)
            return r->error();
    if (results.empty())
        return makeError(ErrorCode::Worker, "the pool has no workers");
    return *results.front();
}

void WorkerPool::cancel()
{
    m_cancel = true;
    m_sanitizeCancel = true;
    for (auto &slot : m_slots)
        slot.client->interrupt();
    std::lock_guard lock(m_activeMutex);
    for (WorkerClient *c : m_active)
        c->interrupt();
}

EvalResult WorkerPool::runOne(Slot &slot, const EvalRequest &request, bool &handBack)
{
    WorkerClient &client = *slot.client;
    handBack = false;
    // A worker that will not start cannot run anything: its item goes to another worker.
    if (auto started = client.start(); !started) {
        if (m_cancel)
            return unfinished(request, Verdict::Queued, "cancelled");
        handBack = true;
        return unfinished(request, Verdict::Crashed, "no worker could run it: " + started.error().text());
    }
    if (m_cancel)
        return unfinished(request, Verdict::Queued, "cancelled");

    auto verified = client.verify(request.key, request.source, request.cubin, request.policy, request.trials,
                                  request.timeout, true, request.seed, request.loweredNames);
    if (!verified) {
        if (verified.error().code == ErrorCode::Cancelled)
            return unfinished(request, Verdict::Queued, "cancelled");
        if (verified.error().code == ErrorCode::Engine)
            return unfinished(request, Verdict::EngineError, verified.error().text());
        return unfinished(request, Verdict::Crashed, "evaluation failed: " + verified.error().text());
    }
    EvalResult result = std::move(*verified);

    if (result.verdict == Verdict::Correct && request.timingTrials > 0 && !m_cancel) {
        Result<TimedRun> timed = [&] {
            std::lock_guard lock(gpuLock(slot.gpu));
            return client.time(request.key, request.timingTrials, request.timeout);
        }();
        if (timed) {
            applyTimedRun(result, *timed);
        } else {
            const Error &e = timed.error();
            if (e.code == ErrorCode::Cancelled)
                return unfinished(request, Verdict::Queued, "cancelled");
            result.verdict = e.code == ErrorCode::Timeout ? Verdict::TimedOut
                : e.code == ErrorCode::Engine             ? Verdict::EngineError
                                                          : Verdict::Crashed;
            result.reason = "verified, then failed while timing: " + e.text();
        }
    }
    client.release(request.key); // best effort: a worker that is gone took the module with it
    return result;
}

std::vector<EvalResult> WorkerPool::evaluate(const std::vector<EvalRequest> &requests, ResultCallback onResult)
{
    m_cancel = false;
    std::vector<EvalResult> results(requests.size());
    std::mutex callbackMutex;
    auto finish = [&](std::size_t index, EvalResult result) {
        results[index] = std::move(result);
        if (onResult) {
            std::lock_guard lock(callbackMutex);
            onResult(index, results[index]);
        }
    };
    std::vector<std::string> lastStartError(m_slots.size());

    WorkQueueHooks hooks;
    hooks.run = [&](std::size_t worker, std::size_t item) {
        bool handBack = false;
        EvalResult result = runOne(m_slots[worker], requests[item], handBack);
        if (handBack) {
            lastStartError[worker] = result.reason;
            return ItemOutcome::HandBack;
        }
        finish(item, std::move(result));
        return ItemOutcome::Done;
    };
    hooks.orphan = [&](std::size_t item) {
        std::string reason = "no worker could be started";
        for (const auto &e : lastStartError)
            if (!e.empty())
                reason = e;
        finish(item, unfinished(requests[item], Verdict::Crashed, reason));
    };
    hooks.stopping = [&] { return m_cancel.load(); };
    hooks.cancelled = [&](std::size_t item) { finish(item, unfinished(requests[item], Verdict::Queued, "cancelled")); };
    WorkQueue::run(requests.size(), m_slots.size(), hooks);
    return results;
}

// ---- the sanitizer gate --------------------------------------------------------------------------

void GpuLock::lock()
{
    m_mutex.lock();
    m_since = std::chrono::steady_clock::now();
}

void GpuLock::unlock()
{
    m_heldNs +=
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - m_since).count();
    m_mutex.unlock();
}

double GpuLock::heldSeconds() const { return double(m_heldNs.load()) * 1e-9; }

double WorkerPool::gpuLockSeconds() const
{
    double total = 0;
    for (const auto &[gpu, lock] : m_gpuLocks)
        total += lock->heldSeconds();
    return total;
}

void WorkerPool::cancelSanitize()
{
    m_sanitizeCancel = true;
    std::lock_guard lock(m_activeMutex);
    for (WorkerClient *c : m_active)
        c->interrupt();
}

SanitizerSetup WorkerPool::sanitizerSetup(std::size_t slot) const
{
    SanitizerSetup s;
    s.tool = m_config.sanitizer.empty() ? findSanitizer() : m_config.sanitizer;
    s.worker = m_slots[slot].client->config(); // its command, GPU and time-outs
    s.baselineMs = m_slots[slot].client->baselineMs();
    return s;
}

// Registers the sanitizer's worker of one run, so that cancel() reaches it.
ClientTracker WorkerPool::tracker()
{
    auto current = std::make_shared<WorkerClient *>(nullptr);
    return [this, current](WorkerClient *c) {
        std::lock_guard lock(m_activeMutex);
        if (*current)
            m_active.erase(*current);
        *current = c;
        if (c)
            m_active.insert(c);
    };
}

SanitizerProbe WorkerPool::probeSanitizer()
{
    m_cancel = false;
    if (m_slots.empty()) {
        SanitizerProbe p;
        p.reason = "the pool has no workers";
        return p;
    }
    SanitizerSetup setup = sanitizerSetup(0);
    const std::string program =
        setup.worker.argv.empty() ? std::string() : std::filesystem::path(setup.worker.argv[0]).filename().string();
    if (program == "ssh" || program == "srun") {
        SanitizerProbe p;
        p.command = joinArgv(setup.tool);
        p.reason = "the worker command `" + joinArgv(setup.worker.argv) +
            "` runs the worker on another machine, where compute-sanitizer on this one cannot see its kernels";
        return p;
    }
    std::lock_guard lock(gpuLock(m_slots[0].gpu));
    return kf::probeSanitizer(setup, tracker(), &m_cancel);
}

std::vector<SanitizeResult> WorkerPool::sanitize(const std::vector<SanitizeRequest> &requests,
                                                 SanitizeCallback onResult)
{
    // Its own flag, not m_cancel: a sanitize() in the background must neither clear a cancel meant
    // for an evaluation nor be the only thing a cancel of it reaches.
    m_sanitizeCancel = false;
    std::vector<SanitizeResult> results(requests.size());
    std::mutex callbackMutex;
    auto finish = [&](std::size_t index, SanitizeResult result) {
        results[index] = std::move(result);
        if (onResult) {
            std::lock_guard lock(callbackMutex);
            onResult(index, results[index]);
        }
    };
    if (!m_problem) {
        for (std::size_t i = 0; i < requests.size(); ++i) {
            SanitizeResult r;
            r.check.outcome = "unchecked";
            r.check.note = "no problem is loaded in the worker pool";
            finish(i, std::move(r));
        }
        return results;
    }
    WorkQueueHooks hooks;
    hooks.run = [&](std::size_t worker, std::size_t item) {
        const SanitizerSetup setup = sanitizerSetup(worker);
        SanitizeResult r;
        {
            std::lock_guard lock(gpuLock(m_slots[worker].gpu));
            r = runSanitizer(setup, *m_problem, requests[item], tracker(), &m_sanitizeCancel);
        }
        finish(item, std::move(r));
        return ItemOutcome::Done;
    };
    hooks.orphan = [&](std::size_t item) { // only a pool without workers leaves one
        SanitizeResult r;
        r.check.outcome = "unchecked";
        r.check.note = "the pool has no workers";
        finish(item, std::move(r));
    };
    hooks.stopping = [&] { return m_sanitizeCancel.load(); };
    hooks.cancelled = [&](std::size_t item) {
        SanitizeResult r;
        r.cancelled = true;
        finish(item, std::move(r));
    };
    WorkQueue::run(requests.size(), m_slots.size(), hooks);
    return results;
}

} // namespace kf
