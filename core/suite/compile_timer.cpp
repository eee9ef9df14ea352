#include "suite/compile_timer.h"

#include <nlohmann/json.hpp>

namespace kf {

CompileTimer::CompileTimer(std::vector<std::string> command, int gpu, bool setVisibleDevices)
    : m_command(std::move(command)), m_gpu(gpu), m_setVisibleDevices(setVisibleDevices)
{
}

CompileTimer::~CompileTimer()
{
    if (!m_process)
        return;
    m_process->closeStdin(); // it ends at the end of its input
    if (!m_process->waitForExit(Clock::now() + std::chrono::seconds(10)))
        m_process->kill();
}

// Ends the process and says why there is no time: `what` went wrong ("" for how it exited), and
// the last line it wrote to stderr. The next measure() starts another.
std::string CompileTimer::failure(const std::string &what)
{
    m_process->kill(); // reaps it, so that its exit can be described
    m_process->drainStderr(Clock::now() + std::chrono::milliseconds(200));
    std::string err = m_process->stderrTail();
    while (!err.empty() && err.back() == '\n')
        err.pop_back();
    const std::size_t cut = err.rfind('\n');
    const std::string line = cut == std::string::npos ? err : err.substr(cut + 1);
    const std::string text = "tools/compile-baseline.py " + (what.empty() ? m_process->exitDescription() : what) +
        (line.empty() ? "" : ": " + line);
    m_process.reset();
    return text;
}

CompileTime CompileTimer::measure(const std::string &file, std::chrono::seconds limit, const std::atomic<bool> &stop)
{
    CompileTime t;
    if (!m_process || !m_process->isRunning()) {
        m_process = std::make_unique<Process>();
        ProcessOptions o;
        o.argv = m_command;
        if (m_setVisibleDevices)
            o.env.push_back("CUDA_VISIBLE_DEVICES=" + std::to_string(m_gpu));
        if (Status s = m_process->start(o); !s) {
            m_process.reset();
            t.note = s.error().text();
            return t;
        }
    }
    auto fail = [&](const std::string &what) {
        t.note = failure(what);
        return t;
    };
    const auto deadline = Clock::now() + limit;
    if (m_process->writeLine(file, deadline) != IoStatus::Ok)
        return fail("");
    std::string line;
    for (;;) {
        if (stop) {
            t.note = "not measured (interrupted)";
            m_process->kill();
            m_process.reset();
            return t;
        }
        // In slices, so that a stop is seen within a fraction of a second.
        const IoStatus io =
            m_process->readLine(line, std::min(deadline, Clock::now() + std::chrono::milliseconds(200)));
        if (io == IoStatus::Ok && !line.empty())
            break;
        if (io == IoStatus::Timeout && Clock::now() < deadline)
            continue;
        if (io == IoStatus::Timeout)
            return fail("did not answer in " + std::to_string(limit.count()) + " s");
        if (io != IoStatus::Ok)
            return fail(m_process->isRunning() ? "stopped answering" : "");
    }
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object() && j.value("compile_ms", 0.0) > 0) {
        t.ms = j["compile_ms"].get<double>();
        t.answered = true;
    } else if (j.is_object() && j.contains("compile_error") && j["compile_error"].is_string()) {
        t.note = j["compile_error"].get<std::string>();
        t.answered = true;
    } else if (j.is_object() && j.contains("error") && j["error"].is_string()) {
        t.note = "tools/compile-baseline.py: " + j["error"].get<std::string>();
    } else {
        t.note = "tools/compile-baseline.py answered something else than its JSON line: " + line.substr(0, 200);
    }
    return t;
}

} // namespace kf
