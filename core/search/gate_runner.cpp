#include "search/gate_runner.h"

#include <chrono>

namespace kf {

namespace {

// How often cancel() repeats its request: the pool clears its sanitizer flag when a run starts,
// so one request could land just before that and be lost.
constexpr auto kRetry = std::chrono::milliseconds(20);

} // namespace

GateRunner::~GateRunner()
{
    if (!idle())
        cancel();
}

void GateRunner::start(std::int64_t node, SanitizeRequest request)
{
    m_finished = false;
    m_node = node;
    m_outcome = Outcome{node, request, {}, 0};
    m_thread = std::thread([this, request = std::move(request)] {
        const auto started = std::chrono::steady_clock::now();
        std::vector<SanitizeResult> results = m_pool.sanitize({request});
        {
            std::lock_guard lock(m_mutex);
            if (!results.empty())
                m_outcome.result = std::move(results.front());
            else
                m_outcome.result.cancelled = true;
            m_outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
            m_finished = true;
        }
        m_done.notify_all();
    });
}

std::optional<GateRunner::Outcome> GateRunner::collect()
{
    if (idle() || !m_finished)
        return std::nullopt;
    m_thread.join();
    return m_outcome;
}

GateRunner::Outcome GateRunner::wait()
{
    m_thread.join();
    return m_outcome;
}

std::optional<GateRunner::Outcome> GateRunner::waitUntil(std::int64_t deadlineNs)
{
    const std::chrono::steady_clock::time_point deadline{std::chrono::nanoseconds(deadlineNs)};
    {
        std::unique_lock lock(m_mutex);
        if (!m_done.wait_until(lock, deadline, [this] { return m_finished.load(); }))
            return std::nullopt;
    }
    m_thread.join();
    return m_outcome;
}

GateRunner::Outcome GateRunner::cancel()
{
    std::unique_lock lock(m_mutex);
    while (!m_finished) {
        lock.unlock();
        m_pool.cancelSanitize();
        lock.lock();
        m_done.wait_for(lock, kRetry, [this] { return m_finished.load(); });
    }
    lock.unlock();
    m_thread.join();
    return m_outcome;
}

} // namespace kf
