#pragma once
// A child process with pipes on stdin, stdout and stderr, for line-based protocols. The child runs
// in its own process group, so killing it also kills whatever it started (a wrapper such as
// `sh -c`, `srun` or `ssh` and its children), and Ctrl-C in a terminal reaches only the engine.
// Reads and writes take deadlines and wait in poll(); nothing busy-waits. A Process is owned by
// one thread; only signalGroup() may be called from another.
#include "util/error.h"

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kf {

using Clock = std::chrono::steady_clock;

struct ProcessOptions {
    std::vector<std::string> argv;                 // argv[0] is looked up on PATH when it has no '/'
    std::vector<std::string> env;                  // "NAME=value", added to (or replacing in) the engine's environment
    std::size_t stderrLimit = 64 * 1024;           // the tail kept for crash reports
    std::size_t maxLineBytes = 1024 * 1024 * 1024; // a longer stdout line is a protocol error
};

enum class IoStatus { Ok, Eof, Timeout, Error };

class Process {
public:
    Process() = default;
    ~Process(); // kills the group and reaps the child if it is still there
    Process(const Process &) = delete;
    Process &operator=(const Process &) = delete;

    // Starts argv. A program that cannot be executed is an error here, not a child that exits.
    Status start(const ProcessOptions &options);

    pid_t pid() const { return m_pid; }
    bool started() const { return m_pid > 0; }
    bool isRunning(); // reaps the child when it has exited

    // Writes `line`, a newline and then `payload` as it is (bytes the line announces, like a
    // module's). Eof: the child closed its stdin (or died).
    IoStatus writeLine(std::string_view line, Clock::time_point deadline, std::string_view payload = {});
    // Reads one line from stdout, without the newline. Eof: stdout closed (an unterminated last
    // line is dropped). Stderr is drained into the tail while waiting.
    IoStatus readLine(std::string &line, Clock::time_point deadline);
    void closeStdin();
    // Reads stderr until it closes or the deadline passes (after a death, for the report).
    void drainStderr(Clock::time_point deadline);

    // Waits for the child to exit by itself until the deadline; reaps it. True when it has exited.
    bool waitForExit(Clock::time_point deadline);
    // SIGKILL to the whole group, then reaps the child. Safe to call more than once.
    void kill();
    // Sends a signal to the group unless the child has been reaped (any thread).
    void signalGroup(int signal);

    std::optional<int> waitStatus() const { return m_status; } // raw waitpid status once reaped
    std::string exitDescription() const;                       // "exited with 3", "killed by signal 11", "running"
    const std::string &stderrTail() const { return m_err; }
    std::string lastError() const { return m_error; } // what went wrong on IoStatus::Error

private:
    IoStatus writeAll(std::string_view data, Clock::time_point deadline);
    void readAvailable(int &fd, std::string &into, bool isStdout);
    void appendStderr(const char *data, std::size_t size);
    void reap(bool block);
    void closeFds();

    ProcessOptions m_options;
    pid_t m_pid = -1;
    int m_in = -1, m_out = -1, m_errFd = -1, m_pidfd = -1;
    std::string m_outBuf;
    std::size_t m_scanned = 0; // how far m_outBuf has been searched for a newline
    bool m_outEof = false;
    std::string m_err;
    std::string m_error;
    std::optional<int> m_status;
    mutable std::mutex m_mutex; // guards m_pid's liveness against signalGroup from other threads
    bool m_reaped = false;
};

// "exited with 3", "killed by signal 11 (Segmentation fault)".
std::string describeWaitStatus(int status);
// argv as a shell would show it, for messages: kernelforge-worker --compile 'a b'
std::string joinArgv(const std::vector<std::string> &argv);

} // namespace kf
