#pragma once
// One compute-sanitizer check at a time on a thread of its own, so that a search can gate a kernel
// while it waits on the generator or the compile pool, when the GPU would otherwise be idle
// (docs/search.md, "The sanitizer gate"). The runner only runs the pool: the search starts a
// check, goes on, and collects the outcome on its own thread, where it writes the session.
//
// The pool's GPU lock still keeps the run off a GPU while a kernel is timed there; cancel() is how
// the search takes the GPU back before it times anything, so that a run never delays a timing.
#include "eval/worker_pool.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>

namespace kf {

class GateRunner {
public:
    explicit GateRunner(WorkerPool &pool) : m_pool(pool) {}
    ~GateRunner(); // cancels a run in flight and waits for it
    GateRunner(const GateRunner &) = delete;
    GateRunner &operator=(const GateRunner &) = delete;

    struct Outcome {
        std::int64_t node = 0;
        SanitizeRequest request;
        SanitizeResult result; // result.cancelled: cancel() stopped it, nothing is known
        double seconds = 0;    // wall time of the run, waiting for the GPU lock included
    };

    // Starts checking `request` (the kernel of `node`); only when idle().
    void start(std::int64_t node, SanitizeRequest request);
    bool idle() const { return !m_thread.joinable(); } // nothing started, or its outcome collected
    bool finished() const { return m_finished.load(); }
    std::int64_t node() const { return m_node; } // of the run started last

    // The outcome of a finished run, none when nothing finished; never blocks.
    std::optional<Outcome> collect();
    // Waits for the run in flight. Only when !idle().
    Outcome wait();
    // Waits for the run in flight until `deadlineNs` (steady clock, nanoseconds since its epoch):
    // its outcome, or none when it is still running then. Only when !idle().
    std::optional<Outcome> waitUntil(std::int64_t deadlineNs);
    // Stops the run in flight and waits until it has let go of the GPU. A run that finished first
    // keeps its outcome. Only when !idle().
    Outcome cancel();

private:
    WorkerPool &m_pool;
    std::thread m_thread;
    std::atomic<bool> m_finished{false};
    std::mutex m_mutex;
    std::condition_variable m_done;
    std::int64_t m_node = 0;
    Outcome m_outcome;
};

} // namespace kf
