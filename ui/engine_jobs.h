#pragma once
// The work the engine facade runs off the GUI thread, as plain functions over core: each takes
// copies of what it needs and returns an immutable value. No Qt widgets here, and no CUDA or
// libtorch: GPU work goes through kernelforge-worker processes, as in kernelforge-cli.
#include "eval/compile_pool.h"
#include "eval/worker_client.h"
#include "model/session_snapshot.h"
#include "search/settings.h"

#include <QMetaType>
#include <QString>
#include <QStringList>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace kf::ui {

struct GpuStatus {
    bool checked = false; // false until the worker answered or failed to start
    bool present = false;
    QString name, arch; // "NVIDIA H200", "sm_90a"
    QString reason;     // why there is none, or why the worker did not start
    // What the worker's handshake says about itself (Help ▸ About).
    QString workerVersion, torch;        // torch: libtorch's version, "" for a compile-only worker
    int cudaRuntime = 0, cudaDriver = 0; // as cudaRuntimeGetVersion / cudaDriverGetVersion (12040)
};

struct CompileReport {
    std::int64_t node = 0; // the candidate the source came from (0: none)
    bool ran = false;      // false: no compiler could run (the error says why)
    bool ok = false;
    QString error;
    std::vector<Diagnostic> diagnostics; // directive errors included
    QString log, ptx, sass;              // sass: "" when cuobjdump is not installed
    QString arch;
    double seconds = 0;
    bool cached = false;
};

struct ProfileReport {
    std::int64_t node = 0;
    bool ok = false;
    QString error;
    std::vector<std::pair<QString, QString>> metrics; // name, value (with unit)
    QStringList stalls;                               // top warp-stall reasons, largest first
};

// Settings a job copies when it starts (the Settings class lives on the GUI thread).
struct EngineConfig {
    std::vector<std::string> workerArgv; // empty: the local kernelforge-worker
    std::string arch = "sm_90a";         // for compile checks when no GPU says otherwise
};

// Asks a worker for the GPU (its handshake).
GpuStatus probeGpu(const EngineConfig &);

// Checks the directives against the problem and compiles the source with NVRTC through a
// compile process (no GPU needed). `pool` is kept by the caller between checks.
CompileReport compileCheck(CompilePool &pool, const std::optional<Problem> &, const std::string &source,
                           const std::string &arch, std::int64_t node);

// Path of an NVIDIA tool (cuobjdump, ncu) on PATH or under the CUDA toolkit; "" when absent.
QString findCudaTool(const QString &name);

// Evaluates a hand-edited source through a worker and records it under `parent` (hand-edited).
// The session's own eager baseline is used when it has one, so speedups stay comparable.
// `client` receives the live worker so that another thread can interrupt it.
struct RebenchResult {
    std::int64_t node = 0; // the new node, 0 when nothing was recorded
    QString verdict;
    QString error; // why it could not run (no GPU, read-only session, ...)
};
RebenchResult rebenchmark(const std::string &sessionPath, std::int64_t parent, const std::string &title,
                          const std::string &source, const EngineConfig &,
                          const std::function<void(WorkerClient *)> &client);

// Exports the candidate as a standalone .cu (kernel/export.h) with the session's provenance. A
// kernel that was never verified (waiting for a GPU, judged wrong, unchecked by the sanitizer)
// says so in the file's header (exportWarning).
Status exportCandidateFile(const SessionSnapshot &, std::int64_t node, const std::string &file);
// Why an exported kernel cannot be trusted as verified, "" when it can.
std::string exportWarning(const NodeView &);
// Exports the session's bank (the fastest correct kernel of each idea, as the search keeps it)
// into `folder`: one .cu per kernel and a bank.csv index. Returns the files written.
Result<std::vector<std::string>> exportBankFolder(const SessionSnapshot &, const std::string &folder);

// Runs the candidate under Nsight Compute through a worker started by ncu, and reads the key
// metrics back. Needs a GPU and ncu.
ProfileReport profileCandidate(const SessionSnapshot &, std::int64_t node, const EngineConfig &,
                               const std::function<void(WorkerClient *)> &client);
// Parses `ncu --csv --page raw` output for the named kernels (exposed for tests).
ProfileReport parseNcuCsv(const QString &csv, const QStringList &kernels);

} // namespace kf::ui

Q_DECLARE_METATYPE(kf::ui::GpuStatus)
Q_DECLARE_METATYPE(kf::ui::CompileReport)
Q_DECLARE_METATYPE(kf::ui::ProfileReport)
