#pragma once
// torch.compile times for the suite (docs/kernelbench.md): one `tools/compile-baseline.py --serve`
// process per GPU, started at the first problem and kept for the next ones, so that Python,
// PyTorch, CUDA and the compiler start once per GPU rather than once per problem.
#include "eval/process.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace kf {

struct CompileTime {
    double ms = 0;         // the compiled model's median, 0 when there is none
    std::string note;      // why there is none
    bool answered = false; // the script timed this problem (a time, or torch.compile's refusal)
};

class CompileTimer {
public:
    // `command` runs the script in its serving mode (one problem path a line on stdin, one JSON
    // line back); it runs with CUDA_VISIBLE_DEVICES=<gpu> when `setVisibleDevices`.
    CompileTimer(std::vector<std::string> command, int gpu, bool setVisibleDevices);
    ~CompileTimer();
    CompileTimer(const CompileTimer &) = delete;
    CompileTimer &operator=(const CompileTimer &) = delete;

    // Times one problem file. A process that dies, hangs past `limit` or is stopped by `stop` is
    // killed; the next call starts another.
    CompileTime measure(const std::string &file, std::chrono::seconds limit, const std::atomic<bool> &stop);

private:
    std::string failure(const std::string &what);

    std::vector<std::string> m_command;
    int m_gpu = 0;
    bool m_setVisibleDevices = true;
    std::unique_ptr<Process> m_process;
};

} // namespace kf
