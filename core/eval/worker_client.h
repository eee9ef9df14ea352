#pragma once
// The engine's side of one `kernelforge-worker` process (docs/protocol.md). The client starts
// the worker, does the handshake, sends one request at a time and waits for its reply with a
// deadline. When the worker dies or stops answering, the request's candidate is recorded as
// crashed or timed out (with the worker's last stderr lines), and the next request starts a new
// worker and sends it the current problem again, so callers never see a dead worker.
//
// A client is used by one thread at a time; interrupt() is the only call safe from another.
#include "eval/process.h"
#include "eval/protocol.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace kf {

using std::chrono::milliseconds;

struct WorkerConfig {
    std::vector<std::string> argv;         // empty: defaultWorkerArgv(); may be `ssh host kernelforge-worker`
    std::vector<std::string> env;          // "NAME=value" added to the worker's environment
    std::string name = "worker";           // how messages name this worker ("gpu 1")
    milliseconds handshakeTimeout{60'000}; // a CUDA context and libtorch take seconds to come up
    milliseconds requestTimeout{60'000};   // hello, release and other quick ops
    milliseconds loadTimeout{600'000};     // compiling the reference, the op graph, fp64 outputs
    milliseconds baselineTimeout{600'000};
    milliseconds ceilingsTimeout{600'000}; // measured on a worker's first start on a GPU
    milliseconds compileTimeout{180'000};  // NVRTC with the CUDA headers takes ~1.3 s; templates more
    std::size_t stderrLimit = 64 * 1024;
    // Progress events the worker sends before a reply; called on the requesting thread.
    std::function<void(const std::string &message)> onProgress;
};

// KERNELFORGE_WORKER when set (a path, or a command line split at spaces with '…' and "…"
// quoting), else `kernelforge-worker` next to the running executable, else on PATH.
std::vector<std::string> defaultWorkerArgv();
std::vector<std::string> splitCommandLine(const std::string &text);

// Time allowed for one verify / time / evaluate request:
//   max(20 s, 50 × baseline × (trials + timingTrials + 10)).
// Each trial and each timed run is one launch sequence; 10 more cover warm-up, the repeated first
// trial that detects races, and the L2 flushes. 50× the eager baseline lets a naive kernel (the
// CRFM runs started at 5× slower than eager) finish with room for the fp64 reference and input
// generation, while a hung kernel is killed within seconds on small problems. The 20 s floor
// covers what does not scale with the problem: module load, context and cuBLAS warm-up.
milliseconds evalTimeout(double baselineMs, int trials, int timingTrials);

struct WorkerReply; // one reply, or why there was none

struct BaselineResult {
    Timing timing;
    nlohmann::json flags; // PyTorch's flags during the run ("cudnn_tf32": true, ...)
};

class WorkerClient {
public:
    explicit WorkerClient(WorkerConfig config = {});
    ~WorkerClient(); // asks the worker to quit, then kills what is left
    WorkerClient(const WorkerClient &) = delete;
    WorkerClient &operator=(const WorkerClient &) = delete;

    // Starts the worker and does the handshake. Errors name the command line and say what went
    // wrong: the program is missing, it exited (with its stderr), or it speaks something else.
    Status start();
    void stop();
    // Asks the worker to quit and waits up to `wait` for it to exit by itself (a wrapper such as
    // compute-sanitizer writes its summary after the worker ends), then sweeps its group. Returns
    // the raw wait status of the command when it exited by itself (also for one that had already
    // died), none when it had to be killed.
    std::optional<int> quit(milliseconds wait);
    bool running();
    const WorkerConfig &config() const { return m_config; }
    const std::optional<Hello> &info() const { return m_hello; } // from the last handshake
    int restarts() const { return m_restarts; }
    std::string stderrTail() const; // the current worker's, or the last dead one's

    Result<Hello> hello();
    // Sends the problem by content; remembered, and sent again to every restarted worker.
    Result<LoadedProblem> load(const Problem &);
    const std::optional<LoadedProblem> &loaded() const { return m_loaded; }
    Result<BaselineResult> baseline(int trials = 100); // also sets baselineMs()
    Result<Ceilings> ceilings();                       // cached after the first answer
    Result<CompileOutput> compile(const std::string &source, const std::vector<std::string> &kernels,
                                  const std::string &arch);

    // The worker keeps the loaded module under `key` for time(). `cubin` is the binary ("" lets
    // the worker compile), with the compiler's lowered names of its kernels (C++ kernels are found
    // by them; extern "C" ones need none). A worker death or time-out is a result (verdict crashed / timed out),
    // not an error; errors are refusals (no problem loaded) and protocol failures.
    // `raceRerun` false leaves out the second run of the first trial's inputs (the racy check).
    // `seed` replays an earlier evaluation's inputs; without one the worker draws a fresh seed.
    // An error with code "engine" means the worker could not judge the kernel (out of GPU memory).
    Result<EvalResult> verify(const std::string &key, const std::string &source, const std::string &cubin,
                              Policy policy, int trials = 5, std::optional<milliseconds> timeout = {},
                              bool raceRerun = true, std::optional<std::uint64_t> seed = {},
                              const std::map<std::string, std::string> &loweredNames = {});
    // Every timed run is checked; the answer carries the verdict of the timed runs (correct,
    // inconsistent, suspect) and a time only where they passed. `checked` false measures what the
    // checks cost and is never used to judge a kernel. Error codes "crashed" and "timeout" when
    // the worker died or was killed.
    Result<TimedRun> time(const std::string &key, int trials = 100, std::optional<milliseconds> timeout = {},
                          bool checked = true);
    Result<EvalResult> evaluate(const std::string &key, const std::string &source, const std::string &cubin,
                                Policy policy, int trials = 5, int timingTrials = 100,
                                std::optional<milliseconds> timeout = {}, std::optional<std::uint64_t> seed = {},
                                const std::map<std::string, std::string> &loweredNames = {});
    Status release(const std::string &key);

    // The eager baseline's median, which scales the evaluation time-outs (0 until known).
    double baselineMs() const { return m_baselineMs; }
    void setBaselineMs(double ms) { m_baselineMs = ms; }

    // Fills the roofline floor at the result's precision (for "% of floor") when the worker left
    // it at 0. Judging a time against the physical floor is the worker's (gpu/physical_floor.h).
    void fillFloor(EvalResult &) const;

    // Kills the worker from another thread; the request in flight returns error "cancelled".
    void interrupt();

    // One raw request ({"op": ...}; the id is added) and its reply object. Low level.
    Result<nlohmann::json> request(nlohmann::json message, milliseconds timeout);

private:
    struct ProblemText {
        std::string text, path, variant;
        std::shared_ptr<const std::string> module; // a module problem's bytes, sent after the request
    };

    // `payload`: raw bytes written right after the request's line, which announces their size.
    WorkerReply call(nlohmann::json message, milliseconds timeout, std::string_view payload = {});
    WorkerReply exchange(nlohmann::json message, milliseconds timeout, std::string_view payload = {});
    static nlohmann::json loadRequest(const ProblemText &problem);
    static std::string_view moduleBytes(const ProblemText &problem);
    Status ensureRunning();
    Status spawnAndHandshake();
    void retire(bool graceful);
    void afterDeath();
    Error replyError(const WorkerReply &, const std::string &what) const;
    EvalResult failedResult(const WorkerReply &, const std::string &source, Policy, const std::string &what) const;

    WorkerConfig m_config;
    std::unique_ptr<Process> m_process;
    mutable std::mutex m_processMutex; // guards the pointer against interrupt()
    std::optional<Hello> m_hello;
    std::optional<ProblemText> m_problem;
    std::optional<LoadedProblem> m_loaded;
    std::optional<Ceilings> m_ceilings;
    double m_baselineMs = 0;
    int m_nextId = 1;
    int m_restarts = 0;
    bool m_everStarted = false;
    bool m_needsRestart = false;
    std::atomic<bool> m_interrupted{false};
    std::string m_deadTail, m_deadExit; // stderr tail and exit status of the last dead worker
    std::optional<int> m_deadStatus;    // its raw wait status, when it was reaped after exiting by itself
};

} // namespace kf
