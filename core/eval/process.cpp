#include "eval/process.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace kf {

namespace {

int pollTimeout(Clock::time_point deadline)
{
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return int(std::clamp<long long>(left, 0, 1 << 30));
}

void setNonBlocking(int fd)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0)
        fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

void closeFd(int &fd)
{
    if (fd >= 0)
        ::close(fd);
    fd = -1;
}

// A write to a pipe whose reader has gone raises SIGPIPE, which would end the engine. Instead of
// ignoring SIGPIPE for the whole program, block it in this thread for the write and consume the
// signal it raised (SIGPIPE from write() is directed at the writing thread).
ssize_t writeWithoutSigpipe(int fd, const char *data, std::size_t size)
{
    sigset_t pipeSet, oldSet, pending;
    sigemptyset(&pipeSet);
    sigaddset(&pipeSet, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipeSet, &oldSet);
    sigpending(&pending);
    bool wasPending = sigismember(&pending, SIGPIPE);
    ssize_t n = ::write(fd, data, size);
    int saved = errno;
    if (n < 0 && saved == EPIPE && !wasPending) {
        timespec zero{};
        while (sigtimedwait(&pipeSet, nullptr, &zero) < 0 && errno == EINTR) {}
    }
    pthread_sigmask(SIG_SETMASK, &oldSet, nullptr);
    errno = saved;
    return n;
}

std::vector<std::string> mergedEnvironment(const std::vector<std::string> &overrides)
{
    auto nameOf = [](std::string_view entry) { return entry.substr(0, entry.find('=')); };
    std::vector<std::string> out;
    for (char **e = environ; e && *e; ++e) {
        std::string_view entry(*e);
        bool replaced = std::any_of(overrides.begin(), overrides.end(),
                                    [&](const std::string &o) { return nameOf(o) == nameOf(entry); });
        if (!replaced)
            out.emplace_back(entry);
    }
    out.insert(out.end(), overrides.begin(), overrides.end());
    return out;
}

std::vector<char *> cStrings(std::vector<std::string> &strings)
{
    std::vector<char *> out;
    for (auto &s : strings)
        out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

} // namespace

std::string describeWaitStatus(int status)
{
    if (WIFEXITED(status))
        return "exited with " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        const char *name = strsignal(sig);
        return "killed by signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : "");
    }
    return "stopped (status " + std::to_string(status) + ")";
}

std::string joinArgv(const std::vector<std::string> &argv)
{
    std::string out;
    for (const auto &arg : argv) {
        if (!out.empty())
            out += ' ';
        bool plain = !arg.empty() && std::all_of(arg.begin(), arg.end(), [](unsigned char c) {
            return std::isalnum(c) || std::strchr("_./=:,+-@%", c);
        });
        if (plain) {
            out += arg;
            continue;
        }
        out += '\'';
        for (char c : arg)
            out += c == '\'' ? std::string("'\\''") : std::string(1, c);
        out += '\'';
    }
    return out;
}

Process::~Process()
{
    if (started())
        kill();
    closeFds();
}

Status Process::start(const ProcessOptions &options)
{
    if (started())
        return makeError(ErrorCode::Process, "a Process object starts one child only");
    if (options.argv.empty() || options.argv[0].empty())
        return makeError(ErrorCode::WorkerStart, "no program to start (empty command)");
    m_options = options;

    // O_CLOEXEC from the start: another thread may spawn a child at the same moment, and a copy
    // of our pipe ends in that child would keep EOF from ever arriving.
    int in[2], out[2], err[2];
    if (pipe2(in, O_CLOEXEC) != 0)
        return makeError(ErrorCode::WorkerStart, std::string("pipe: ") + std::strerror(errno));
    if (pipe2(out, O_CLOEXEC) != 0) {
        int e = errno;
        ::close(in[0]), ::close(in[1]);
        return makeError(ErrorCode::WorkerStart, std::string("pipe: ") + std::strerror(e));
    }
    if (pipe2(err, O_CLOEXEC) != 0) {
        int e = errno;
        ::close(in[0]), ::close(in[1]), ::close(out[0]), ::close(out[1]);
        return makeError(ErrorCode::WorkerStart, std::string("pipe: ") + std::strerror(e));
    }

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err[1], 2);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    // Descriptors other libraries opened without O_CLOEXEC must not leak into the worker either.
    posix_spawn_file_actions_addclosefrom_np(&actions, 3);
#endif

    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setpgroup(&attr, 0);
    sigset_t none, defaults;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none); // the spawning thread may be blocking signals
    sigemptyset(&defaults);
    for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGCHLD})
        sigaddset(&defaults, sig);
    posix_spawnattr_setsigdefault(&attr, &defaults); // the engine may ignore some of them
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

    std::vector<std::string> args = options.argv;
    std::vector<std::string> env = mergedEnvironment(options.env);
    auto argvC = cStrings(args);
    auto envC = cStrings(env);
    pid_t pid = -1;
    int rc = posix_spawnp(&pid, argvC[0], &actions, &attr, argvC.data(), envC.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    ::close(in[0]), ::close(out[1]), ::close(err[1]);
    if (rc != 0) {
        ::close(in[1]), ::close(out[0]), ::close(err[0]);
        return makeError(ErrorCode::WorkerStart, "cannot start `" + joinArgv(options.argv) + "`: " + std::strerror(rc));
    }

    m_pid = pid;
    m_in = in[1], m_out = out[0], m_errFd = err[0];
    setNonBlocking(m_in);
    setNonBlocking(m_out);
    setNonBlocking(m_errFd);
#ifdef SYS_pidfd_open
    // Lets waitForExit sleep in poll(); kernels before 5.3 fall back to short sleeps.
    m_pidfd = int(syscall(SYS_pidfd_open, pid, 0));
    if (m_pidfd >= 0)
        fcntl(m_pidfd, F_SETFD, FD_CLOEXEC);
#endif
    return Ok{};
}

// Whether the child has exited, without reaping it: a zombie keeps its pid (and so its process
// group id) from being reused until kill() has swept the group.
bool Process::isRunning()
{
    std::lock_guard lock(m_mutex);
    if (m_pid <= 0 || m_reaped)
        return false;
    siginfo_t info{};
    if (waitid(P_PID, id_t(m_pid), &info, WEXITED | WNOHANG | WNOWAIT) != 0)
        return errno == EINTR; // ECHILD: someone else reaped it
    return info.si_pid == 0;
}

void Process::appendStderr(const char *data, std::size_t size)
{
    m_err.append(data, size);
    // Trim in steps of the limit, so a chatty child costs amortised linear time.
    if (m_err.size() > 2 * m_options.stderrLimit)
        m_err.erase(0, m_err.size() - m_options.stderrLimit);
}

void Process::readAvailable(int &fd, std::string &into, bool isStdout)
{
    char buffer[65536];
    while (fd >= 0) {
        ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n > 0) {
            if (isStdout)
                into.append(buffer, std::size_t(n));
            else
                appendStderr(buffer, std::size_t(n));
            if (std::size_t(n) < sizeof buffer)
                return;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        closeFd(fd); // end of file, or an error that ends the stream all the same
        if (isStdout)
            m_outEof = true;
    }
}

IoStatus Process::writeLine(std::string_view line, Clock::time_point deadline, std::string_view payload)
{
    std::string data;
    data.reserve(line.size() + 1);
    data.append(line);
    data += '\n';
    if (IoStatus s = writeAll(data, deadline); s != IoStatus::Ok)
        return s;
    return writeAll(payload, deadline);
}

IoStatus Process::writeAll(std::string_view data, Clock::time_point deadline)
{
    std::size_t done = 0;
    while (done < data.size()) {
        if (m_in < 0)
            return IoStatus::Eof;
        ssize_t n = writeWithoutSigpipe(m_in, data.data() + done, data.size() - done);
        if (n > 0) {
            done += std::size_t(n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EPIPE)
            return IoStatus::Eof;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            m_error = std::string("write: ") + std::strerror(errno);
            return IoStatus::Error;
        }
        // The pipe is full. Keep reading the child's output meanwhile: a child blocked on a full
        // stdout or stderr pipe would never read the rest of our line.
        pollfd fds[3] = {{m_in, POLLOUT, 0}, {m_outEof ? -1 : m_out, POLLIN, 0}, {m_errFd, POLLIN, 0}};
        int timeout = pollTimeout(deadline);
        if (timeout == 0 && Clock::now() >= deadline)
            return IoStatus::Timeout;
        int ready = ::poll(fds, 3, timeout);
        if (ready < 0 && errno != EINTR) {
            m_error = std::string("poll: ") + std::strerror(errno);
            return IoStatus::Error;
        }
        if (ready == 0 && Clock::now() >= deadline)
            return IoStatus::Timeout;
        if (fds[1].revents)
            readAvailable(m_out, m_outBuf, true);
        if (fds[2].revents)
            readAvailable(m_errFd, m_outBuf, false);
    }
    return IoStatus::Ok;
}

IoStatus Process::readLine(std::string &line, Clock::time_point deadline)
{
    for (;;) {
        auto pos = m_outBuf.find('\n', m_scanned);
        if (pos != std::string::npos) {
            line.assign(m_outBuf, 0, pos);
            if (!line.empty() && line.back() == '\r')
                line.pop_back();
            m_outBuf.erase(0, pos + 1);
            m_scanned = 0;
            return IoStatus::Ok;
        }
        m_scanned = m_outBuf.size();
        if (m_outBuf.size() > m_options.maxLineBytes) {
            m_error = "a line longer than " + std::to_string(m_options.maxLineBytes) + " bytes";
            return IoStatus::Error;
        }
        if (m_outEof || m_out < 0)
            return IoStatus::Eof;
        pollfd fds[2] = {{m_out, POLLIN, 0}, {m_errFd, POLLIN, 0}};
        int timeout = pollTimeout(deadline);
        if (timeout == 0 && Clock::now() >= deadline)
            return IoStatus::Timeout;
        int ready = ::poll(fds, 2, timeout);
        if (ready < 0 && errno != EINTR) {
            m_error = std::string("poll: ") + std::strerror(errno);
            return IoStatus::Error;
        }
        if (fds[1].revents)
            readAvailable(m_errFd, m_outBuf, false);
        if (fds[0].revents)
            readAvailable(m_out, m_outBuf, true);
    }
}

void Process::closeStdin() { closeFd(m_in); }

void Process::drainStderr(Clock::time_point deadline)
{
    while (m_errFd >= 0) {
        pollfd fd{m_errFd, POLLIN, 0};
        int timeout = pollTimeout(deadline);
        int ready = ::poll(&fd, 1, timeout);
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0)
            return;
        readAvailable(m_errFd, m_outBuf, false);
    }
}

bool Process::waitForExit(Clock::time_point deadline)
{
    if (m_pidfd >= 0) {
        while (isRunning()) {
            pollfd fd{m_pidfd, POLLIN, 0};
            int ready = ::poll(&fd, 1, pollTimeout(deadline));
            if (ready < 0 && errno == EINTR)
                continue;
            if (ready == 0)
                return !isRunning();
            if (ready < 0) {
                closeFd(m_pidfd); // unusable: fall through to the sleeping loop
                break;
            }
        }
        if (m_pidfd >= 0)
            return true;
    }
    // Without pidfd there is nothing to sleep on; back off from 1 ms to 50 ms between checks.
    auto step = std::chrono::milliseconds(1);
    while (isRunning()) {
        auto now = Clock::now();
        if (now >= deadline)
            return false;
        std::this_thread::sleep_for(std::min<Clock::duration>(step, deadline - now));
        step = std::min(step * 2, std::chrono::milliseconds(50));
    }
    return true;
}

void Process::signalGroup(int signal)
{
    std::lock_guard lock(m_mutex);
    if (m_pid > 0 && !m_reaped)
        ::kill(-m_pid, signal);
}

void Process::kill()
{
    if (m_pid <= 0)
        return;
    {
        std::lock_guard lock(m_mutex);
        if (m_reaped)
            return;
        // The group first (a wrapper's children), then the child itself in case it left the group.
        ::kill(-m_pid, SIGKILL);
        ::kill(m_pid, SIGKILL);
    }
    reap(true);
}

void Process::reap(bool block)
{
    // Wait without reaping, so the pid stays ours while signalGroup might still use it; then reap
    // under the lock.
    siginfo_t info{};
    int flags = WEXITED | WNOWAIT | (block ? 0 : WNOHANG);
    while (waitid(P_PID, id_t(m_pid), &info, flags) != 0 && errno == EINTR) {}
    std::lock_guard lock(m_mutex);
    if (m_reaped)
        return;
    int status = 0;
    pid_t r;
    while ((r = waitpid(m_pid, &status, block ? 0 : WNOHANG)) < 0 && errno == EINTR) {}
    if (r == m_pid) {
        m_status = status;
        m_reaped = true;
    } else if (r < 0) {
        m_reaped = true; // ECHILD: reaped elsewhere (SIGCHLD ignored); the status is unknown
    }
}

std::string Process::exitDescription() const
{
    if (m_pid <= 0)
        return "not started";
    if (m_status)
        return describeWaitStatus(*m_status);
    return m_reaped ? "exited (status unknown)" : "running";
}

void Process::closeFds()
{
    closeFd(m_in);
    closeFd(m_out);
    closeFd(m_errFd);
    closeFd(m_pidfd);
}

} // namespace kf
