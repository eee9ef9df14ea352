#pragma once
// Runs items 0..n-1 on one thread per worker, shared by the worker and compile pools. A worker
// that cannot run anything any more (its process will not start) hands its item back and stops,
// so the other workers take it over; only when every worker has stopped do the remaining items
// fail. No item is lost and none runs twice.
#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kf {

enum class ItemOutcome { Done, HandBack };

struct WorkQueueHooks {
    // Runs `item` on `worker`; HandBack when the worker is out of service.
    std::function<ItemOutcome(std::size_t worker, std::size_t item)> run;
    // Called for each item no worker could take (every worker handed back).
    std::function<void(std::size_t item)> orphan;
    // Checked between items; true leaves the remaining items to `cancelled`.
    std::function<bool()> stopping;
    std::function<void(std::size_t item)> cancelled;
};

class WorkQueue {
public:
    // Blocks until every item is done, orphaned or cancelled. Hooks run on the worker threads;
    // `orphan` runs with the queue locked.
    static void run(std::size_t items, std::size_t workers, const WorkQueueHooks &hooks)
    {
        if (workers == 0) {
            for (std::size_t i = 0; i < items; ++i)
                if (hooks.orphan)
                    hooks.orphan(i);
            return;
        }
        WorkQueue q;
        for (std::size_t i = 0; i < items; ++i)
            q.m_queue.push_back(i);
        q.m_remaining = items;
        const std::size_t started = std::min(workers, items); // more would find nothing to do
        q.m_alive = started;
        std::vector<std::thread> threads;
        for (std::size_t w = 0; w < started; ++w)
            threads.emplace_back([&q, &hooks, w] { q.loop(w, hooks); });
        for (auto &t : threads)
            t.join();
        for (std::size_t item : q.m_queue) // left over by a stop request
            if (hooks.cancelled)
                hooks.cancelled(item);
    }

private:
    void loop(std::size_t worker, const WorkQueueHooks &hooks)
    {
        for (;;) {
            std::size_t item;
            {
                std::unique_lock lock(m_mutex);
                // An item handed back by another worker may still arrive while others are busy.
                m_ready.wait(lock, [&] { return !m_queue.empty() || m_remaining == 0; });
                if (m_remaining == 0 || (hooks.stopping && hooks.stopping()))
                    return;
                item = m_queue.front();
                m_queue.pop_front();
            }
            ItemOutcome outcome = hooks.run(worker, item);
            std::lock_guard lock(m_mutex);
            if (outcome == ItemOutcome::Done) {
                if (--m_remaining == 0)
                    m_ready.notify_all();
                continue;
            }
            m_queue.push_front(item);
            if (--m_alive == 0) {
                // Nobody is left to run them: they fail, and every waiter is released.
                for (std::size_t left : m_queue)
                    if (hooks.orphan)
                        hooks.orphan(left);
                m_remaining -= m_queue.size();
                m_queue.clear();
            }
            m_ready.notify_all();
            return;
        }
    }

    std::mutex m_mutex;
    std::condition_variable m_ready;
    std::deque<std::size_t> m_queue;
    std::size_t m_remaining = 0;
    std::size_t m_alive = 0;
};

} // namespace kf
