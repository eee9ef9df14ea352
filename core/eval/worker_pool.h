#pragma once
// Workers across GPUs (one per GPU, optionally several). Verification runs in parallel on every
// worker; timing takes its GPU's lock, so only one kernel is timed on a GPU at a time and two
// workers sharing a GPU never disturb each other's measurements. A worker that crashes or hangs
// costs only the candidate it was running (recorded as crashed / timed out); its client starts a
// new worker for the next one.
#include "eval/sanitizer.h"
#include "eval/worker_client.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace kf {

struct EvalRequest {
    std::string key;    // the candidate's id; the worker keeps its module under it until released
    std::string source; // the candidate file
    std::string cubin;  // compiled binary, or "" to let the worker compile
    std::map<std::string, std::string> loweredNames; // the cubin's kernel symbols, by name as written
    Policy policy = Policy::Strict;
    int trials = 5;
    int timingTrials = 100;              // 0: verify only
    std::optional<milliseconds> timeout; // per step; default evalTimeout() from the baseline
    std::optional<std::uint64_t> seed;   // replays an evaluation; none draws a fresh one (the default)
};

struct PoolConfig {
    WorkerConfig worker;      // argv and time-outs shared by every worker
    std::vector<int> gpus{0}; // GPU indices
    int workersPerGpu = 1;
    // Each worker is started with CUDA_VISIBLE_DEVICES=<gpu>. Off when the command picks the GPU
    // itself (`srun --gres=gpu:1 ...`) or runs elsewhere (`ssh host ...` does not pass it on).
    bool setVisibleDevices = true;
    // The compute-sanitizer command for the sanitizer gate; empty: findSanitizer().
    std::vector<std::string> sanitizer;
};

// The lock that lets one kernel at a time be timed on a GPU and keeps compute-sanitizer off a GPU
// while one is. It counts how long it was held, so a search can tell the part of its evaluations
// spent timing from the part spent verifying (docs/search.md, "Where the budget goes").
class GpuLock {
public:
    void lock();
    void unlock();
    double heldSeconds() const; // every hold that has ended
private:
    std::mutex m_mutex;
    std::chrono::steady_clock::time_point m_since;
    std::atomic<std::int64_t> m_heldNs{0};
};

class WorkerPool {
public:
    explicit WorkerPool(PoolConfig config = {});
    ~WorkerPool();
    WorkerPool(const WorkerPool &) = delete;
    WorkerPool &operator=(const WorkerPool &) = delete;

    // Starts every worker in parallel. Fails only when none starts; the others' errors are in
    // startErrors() and those workers are tried again at the next evaluate().
    Status start();
    const std::vector<Error> &startErrors() const { return m_startErrors; }
    // Ends every worker (start() begins again), which frees the GPU memory of the problem loaded.
    void stop();

    Status load(const Problem &);                      // into every worker, in parallel
    Result<BaselineResult> baseline(int trials = 100); // on one worker; scales every worker's time-outs
    Result<Ceilings> ceilings();                       // every worker's (per GPU); returns the first

    // Results in the order of `requests`. `onResult` is called once per finished result, from the
    // pool's threads but never two at a time. A result that could not be produced still comes
    // back: crashed or timed out with the reason, or queued with reason "cancelled".
    using ResultCallback = std::function<void(std::size_t index, const EvalResult &)>;
    std::vector<EvalResult> evaluate(const std::vector<EvalRequest> &requests, ResultCallback onResult = {});
    // Stops evaluate() early from another thread: the workers are killed (and restarted later).
    // Stops sanitize() and probeSanitizer() too.
    void cancel();

    // The sanitizer gate (eval/sanitizer.h). Whether compute-sanitizer works around this pool's
    // worker command: kept per process; off without asking when the command runs the worker on
    // another machine (ssh, srun), where a tool on this one would check nothing.
    SanitizerProbe probeSanitizer();
    // Each request once under its tools, a fresh worker process per tool, in parallel across the
    // GPUs; a run holds its GPU's lock, as timing does, so it never slows a measurement. Needs a
    // problem loaded with load(). Results in the order of `requests`; `onResult` as in evaluate().
    using SanitizeCallback = std::function<void(std::size_t index, const SanitizeResult &)>;
    std::vector<SanitizeResult> sanitize(const std::vector<SanitizeRequest> &requests, SanitizeCallback onResult = {});
    // Stops a sanitize() in flight, from another thread, and nothing else: its runs come back
    // cancelled while evaluations go on. A search gates kernels in the background this way, and
    // takes the GPU back when it needs it for timing.
    void cancelSanitize();

    // Seconds the GPU locks were held, summed over the GPUs: timings, the baseline, the ceilings
    // and compute-sanitizer runs. A search reads it around an evaluation to split its time.
    double gpuLockSeconds() const;
    std::size_t gpuCount() const { return m_gpuLocks.size(); }

    std::size_t size() const { return m_slots.size(); }
    WorkerClient &worker(std::size_t i) { return *m_slots[i].client; }
    int gpuOf(std::size_t i) const { return m_slots[i].gpu; }

private:
    struct Slot {
        std::unique_ptr<WorkerClient> client;
        int gpu = 0;
    };
    EvalResult runOne(Slot &, const EvalRequest &, bool &handBack);
    GpuLock &gpuLock(int gpu) { return *m_gpuLocks.at(gpu); }
    SanitizerSetup sanitizerSetup(std::size_t slot) const;
    ClientTracker tracker();

    PoolConfig m_config;
    std::vector<Slot> m_slots;
    std::map<int, std::unique_ptr<GpuLock>> m_gpuLocks;
    std::vector<Error> m_startErrors;
    std::atomic<bool> m_cancel{false};
    std::atomic<bool> m_sanitizeCancel{false}; // cancel() or cancelSanitize(); what sanitize() checks
    std::optional<Problem> m_problem;          // the loaded one, for the sanitizer's own workers
    std::mutex m_activeMutex;
    std::set<WorkerClient *> m_active; // sanitizer workers running now, for cancel()
};

} // namespace kf
