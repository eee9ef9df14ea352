#include "eval/sanitizer.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include <sys/wait.h>
#include <unistd.h>

namespace kf {

namespace fs = std::filesystem;

namespace {

constexpr const char *kPrefix = "=========";

bool executable(const fs::path &p)
{
    std::error_code ec;
    return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

std::string trim(std::string_view s)
{
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
        s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
        s.remove_suffix(1);
    return std::string(s);
}

// The top-level lines of the tool's output ("========= Invalid __global__ write ..."), without the
// prefix; indented lines under them (addresses, backtraces) are left out.
std::vector<std::string> topLines(const std::string &log)
{
    std::vector<std::string> out;
    std::istringstream in(log);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind(kPrefix, 0) != 0)
            continue;
        std::string_view rest = std::string_view(line).substr(std::string_view(kPrefix).size());
        if (rest.size() < 2 || rest[0] != ' ' || std::isspace(static_cast<unsigned char>(rest[1])))
            continue;
        out.push_back(trim(rest));
    }
    return out;
}

// Lines that frame a report rather than being a finding.
bool framing(const std::string &line)
{
    for (const char *p : {"COMPUTE-SANITIZER", "ERROR SUMMARY", "RACECHECK SUMMARY", "LEAK SUMMARY",
                          "Target application returned", "Error: process didn't terminate"})
        if (line.rfind(p, 0) == 0)
            return true;
    return false;
}

// The number after `key` in "KEY: 3 errors", or -1.
int countAfter(const std::string &line, const std::string &key)
{
    auto at = line.find(key);
    if (at == std::string::npos)
        return -1;
    return std::atoi(line.c_str() + at + key.size());
}

// A few lines of what the tool said, for a message about a run that judged nothing.
std::string toolSaid(const std::string &log)
{
    std::string out;
    int n = 0;
    for (const std::string &line : topLines(log)) {
        if (line.rfind("COMPUTE-SANITIZER", 0) == 0 || n >= 3)
            continue;
        out += (out.empty() ? "" : "; ") + line;
        ++n;
    }
    if (out.empty()) { // not the tool's framing at all: its own error text, say
        std::istringstream in(log);
        for (std::string line; std::getline(in, line) && n < 3;)
            if (!trim(line).empty()) {
                out += (out.empty() ? "" : "; ") + trim(line);
                ++n;
            }
    }
    return out.size() > 600 ? out.substr(0, 600) + "…" : out;
}

std::string readAll(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string logPath()
{
    static std::atomic<int> counter{0};
    std::error_code ec;
    fs::path dir = fs::temp_directory_path(ec);
    if (ec)
        dir = "/tmp";
    return (dir / ("kf-sanitizer-" + std::to_string(::getpid()) + "-" + std::to_string(++counter) + ".log")).string();
}

struct ToolRun {
    std::string outcome; // "clean", "finding", "unchecked"
    std::string note, report;
    std::optional<EvalResult> verdict;
    double seconds = 0;
    bool cancelled = false;
    bool toolFailed = false; // the finding is the tool's own failure
};

ToolRun runTool(const SanitizerSetup &setup, const Problem &problem, const SanitizeRequest &req, SanitizerTool tool,
                const ClientTracker &track, const std::atomic<bool> *cancel)
{
    const auto started = std::chrono::steady_clock::now();
    ToolRun out;
    auto cancelled = [&] { return cancel && cancel->load(); };
    if (cancelled()) {
        out.cancelled = true;
        return out;
    }
    const std::string log = logPath();
    WorkerConfig config = setup.worker;
    config.argv = sanitizerArgv(setup.tool, tool, req.kernels, log,
                                setup.worker.argv.empty() ? defaultWorkerArgv() : setup.worker.argv);
    // Without libtorch's caching allocator every tensor is its own cudaMalloc, so memcheck knows
    // each tensor's bounds; with it, a read just past a tensor lands inside a cached block.
    config.env.push_back("PYTORCH_NO_CUDA_MEMORY_CACHING=1");
    // Ceilings measured under the tool come out a hundred times too slow (and take minutes).
    config.env.push_back("KERNELFORGE_NO_CEILINGS=1");
    config.name += " under compute-sanitizer " + toString(tool);
    config.handshakeTimeout = std::max(config.handshakeTimeout, milliseconds(120'000));
    config.onProgress = {};

    std::string failure; // why nothing was judged
    std::optional<int> status;
    {
        WorkerClient client(config);
        if (track)
            track(&client);
        Error error;
        // A cancel that lands while the client starts is only seen here.
        const Error stop = makeError(ErrorCode::Cancelled, "cancelled");
        if (Status s = client.start(); !s)
            error = s.error();
        else if (cancelled())
            error = stop;
        else if (auto loaded = client.load(problem); !loaded)
            error = loaded.error();
        else if (cancelled())
            error = stop;
        else if (auto v = client.verify(req.key, req.source, "", req.policy, 1,
                                        req.timeout.value_or(sanitizerTimeout(setup.baselineMs)), false);
                 !v)
            error = v.error();
        else
            out.verdict = *v;
        if (error.code == ErrorCode::Cancelled)
            out.cancelled = true;
        else if (!error.message.empty())
            failure = error.text();
        // Racecheck analyses what it saw once the worker ends, so the wait is generous.
        status = client.quit(milliseconds(60'000));
        if (track)
            track(nullptr);
    }
    const std::string text = readAll(log);
    std::error_code ec;
    fs::remove(log, ec);
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (out.cancelled || cancelled()) {
        out.cancelled = true;
        return out;
    }

    const SanitizerLog parsed = parseSanitizerLog(text);
    const bool flagged = status && WIFEXITED(*status) && WEXITSTATUS(*status) == kSanitizerExitCode;
    const std::string name = toString(tool);
    if (parsed.errors > 0 || flagged) {
        out.outcome = "finding";
        // A tool that failed on the kernel (racecheck "failed to handle a hardware exception" where
        // memcheck had been clean) vouches for nothing: the kernel is not kept, but it is not
        // called racy either.
        out.toolFailed = !parsed.toolFailure.empty() && parsed.errors <= 1;
        if (out.toolFailed)
            out.note =
                name + ": the tool failed on this kernel, so it cannot vouch for it (" + parsed.toolFailure + ")";
        else
            out.note = name + ": " +
                (parsed.errors > 0 ? std::to_string(parsed.errors) + (parsed.errors == 1 ? " error" : " errors")
                                   : "exit status " + std::to_string(kSanitizerExitCode)) +
                (parsed.first.empty() ? "" : ": " + parsed.first);
        out.report = trimSanitizerReport(text);
        return out;
    }
    out.outcome = "unchecked";
    out.report = trimSanitizerReport(text);
    const std::string said = toolSaid(text);
    if (!failure.empty())
        out.note = name + ": " + failure;
    else if (!parsed.summary)
        out.note = name + ": the tool wrote no ERROR SUMMARY" +
            (status ? " (" + describeWaitStatus(*status) + ")" : std::string(" (it had to be killed)"));
    else if (out.verdict->verdict != Verdict::Correct)
        out.note = name + ": under the tool the candidate was " + toString(out.verdict->verdict) +
            (out.verdict->reason.empty() ? "" : " (" + out.verdict->reason + ")");
    else {
        out.outcome = "clean";
        out.report.clear();
        return out;
    }
    if (!said.empty() && out.note.find(said) == std::string::npos)
        out.note += "; compute-sanitizer said: " + said;
    return out;
}

std::string toolVersion(const std::vector<std::string> &tool)
{
    Process p;
    ProcessOptions o;
    o.argv = tool;
    o.argv.push_back("--version");
    if (!p.start(o))
        return {};
    const auto deadline = Clock::now() + std::chrono::seconds(15);
    std::string version;
    for (std::string line; version.empty() && p.readLine(line, deadline) == IoStatus::Ok;)
        if (auto at = line.find("Version "); at != std::string::npos) {
            std::istringstream words(line.substr(at + 8));
            words >> version;
        }
    p.kill();
    return version;
}

const char *kProbeProblem = R"(name = "sanitizer-probe"
description = "y = 2x: the known-good kernel that shows compute-sanitizer works on this machine"
policy = "strict"

[constants]
N = 4096

[[inputs]]
name = "x"
shape = ["N"]
dtype = "float32"
init = "uniform"

[[outputs]]
name = "out"
shape = ["N"]
dtype = "float32"

[reference]
source = '''
def forward(x: Tensor) -> Tensor:
    return x * 2.0
'''
)";

const char *kProbeKernel =
    R"(// The sanitizer probe: y = 2x, with a swap of neighbours through shared memory so that racecheck
// has accesses to check. Clean under memcheck and racecheck.
// @launch kf_sanitizer_probe grid(cdiv(x.numel, 256)) block(256) args(x, out, i32(x.numel))
extern "C" __global__ void kf_sanitizer_probe(const float *x, float *out, int n)
{
    constexpr int kBlock = 256;
    __shared__ float tile[kBlock];
    const int t = threadIdx.x;
    const int i = blockIdx.x * kBlock + t;
    tile[t] = i < n ? x[i] : 0.0f;
    __syncthreads();
    const float neighbour = tile[t ^ 1];
    __syncthreads();
    tile[t] = neighbour;      // now tile[t ^ 1] holds x[i] again
    __syncthreads();
    if (i < n)
        out[i] = 2.0f * tile[t ^ 1];
}
)";

} // namespace

std::string toString(SanitizerTool t) { return t == SanitizerTool::Memcheck ? "memcheck" : "racecheck"; }

std::vector<std::string> findSanitizer()
{
    if (const char *env = std::getenv("KF_SANITIZER"); env && *env) {
        if (executable(env)) // a path with spaces stays one argument
            return {env};
        return splitCommandLine(env);
    }
    if (const char *path = std::getenv("PATH")) {
        std::istringstream dirs(path);
        for (std::string dir; std::getline(dirs, dir, ':');)
            if (!dir.empty() && executable(fs::path(dir) / "compute-sanitizer"))
                return {(fs::path(dir) / "compute-sanitizer").string()};
    }
    if (const char *cuda = std::getenv("CUDA_HOME"); cuda && *cuda)
        if (executable(fs::path(cuda) / "bin" / "compute-sanitizer"))
            return {(fs::path(cuda) / "bin" / "compute-sanitizer").string()};
    if (executable("/usr/local/cuda/bin/compute-sanitizer"))
        return {"/usr/local/cuda/bin/compute-sanitizer"};
    return {};
}

std::string sanitizerSearchPlaces()
{
    return "looked on PATH, in $CUDA_HOME/bin and in /usr/local/cuda/bin; install the CUDA toolkit's "
           "compute-sanitizer or set KF_SANITIZER to its path";
}

std::string sanitizerKernelFilter(const std::vector<std::string> &kernels)
{
    std::vector<std::string> names;
    for (std::string k : kernels) {
        k = trim(k.substr(0, k.find('<')));
        if (auto at = k.rfind("::"); at != std::string::npos)
            k = k.substr(at + 2);
        if (!k.empty() && std::find(names.begin(), names.end(), k) == names.end())
            names.push_back(k);
    }
    if (names.empty())
        return {};
    if (names.size() == 1)
        return "kns=" + names.front();
    // ".*(a|b).*" matches whether the tool anchors the expression or searches with it.
    std::string alternatives;
    for (const std::string &n : names) {
        alternatives += alternatives.empty() ? "" : "|";
        for (char c : n) {
            if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
                alternatives += '\\';
            alternatives += c;
        }
    }
    return "regex=.*(" + alternatives + ").*";
}

std::vector<std::string> sanitizerArgv(const std::vector<std::string> &tool, SanitizerTool which,
                                       const std::vector<std::string> &kernels, const std::string &logFile,
                                       const std::vector<std::string> &worker)
{
    std::vector<std::string> argv = tool;
    argv.insert(argv.end(),
                {"--tool", toString(which), "--error-exitcode", std::to_string(kSanitizerExitCode), "--print-limit",
                 "20",
                 // A failing CUDA call of the worker's own (libtorch probing a feature)
                 // says nothing about the candidate's kernels.
                 "--report-api-errors", "no", "--log-file", logFile});
    if (which == SanitizerTool::Racecheck)
        argv.insert(argv.end(), {"--racecheck-report", "analysis"});
    // cudaMalloc may place two tensors back to back; a read just past one would land in the next
    // and pass. A padding buffer after every allocation makes that read an error.
    if (which == SanitizerTool::Memcheck)
        argv.insert(argv.end(), {"--padding", "4096"});
    if (std::string filter = sanitizerKernelFilter(kernels); !filter.empty())
        argv.insert(argv.end(), {"--kernel-name", filter});
    argv.insert(argv.end(), worker.begin(), worker.end());
    return argv;
}

SanitizerLog parseSanitizerLog(const std::string &log)
{
    SanitizerLog out;
    for (const std::string &line : topLines(log)) {
        if (int n = countAfter(line, "ERROR SUMMARY:"); n >= 0) {
            out.summary = true;
            out.errors = std::max(out.errors, n);
        } else if (line.rfind("RACECHECK SUMMARY", 0) == 0) {
            // "RACECHECK SUMMARY: 2 hazards displayed (1 error, 1 warning)": warnings do not count.
            out.summary = true;
            if (auto open = line.find('('); open != std::string::npos)
                out.errors = std::max(out.errors, std::atoi(line.c_str() + open + 1));
        } else {
            if (out.toolFailure.empty() && line.rfind("Internal Sanitizer Error", 0) == 0)
                out.toolFailure = line.size() > 300 ? line.substr(0, 300) + "…" : line;
            if (out.first.empty() && !framing(line))
                out.first = line.size() > 300 ? line.substr(0, 300) + "…" : line;
        }
    }
    return out;
}

std::string trimSanitizerReport(const std::string &log, std::size_t limit)
{
    if (log.size() <= limit)
        return log;
    const std::size_t tail = limit / 8;
    std::size_t cut = log.rfind('\n', limit - tail);
    if (cut == std::string::npos || cut < limit / 2)
        cut = limit - tail;
    std::size_t from = log.find('\n', log.size() - tail);
    if (from == std::string::npos)
        from = log.size() - tail;
    return log.substr(0, cut) + "\n… (" + std::to_string(from - cut) + " bytes left out)" + log.substr(from);
}

milliseconds sanitizerTimeout(double baselineMs) { return evalTimeout(baselineMs, 1, 0) * 10; }

SanitizeResult runSanitizer(const SanitizerSetup &setup, const Problem &problem, const SanitizeRequest &req,
                            const ClientTracker &track, const std::atomic<bool> *cancel)
{
    SanitizeResult result;
    result.check.outcome = "clean";
    for (SanitizerTool tool : req.tools) {
        ToolRun run = runTool(setup, problem, req, tool, track, cancel);
        if (run.cancelled) {
            result.cancelled = true;
            return result;
        }
        result.check.tools.push_back(toString(tool));
        result.check.seconds += run.seconds;
        result.verdict = run.verdict;
        if (run.outcome == "finding") {
            result.check.outcome = "finding";
            result.check.note = run.note;
            result.finding = tool;
            result.toolFailed = run.toolFailed;
            result.report = run.report;
            return result;
        }
        if (run.outcome == "unchecked" && result.check.outcome == "clean") {
            result.check.outcome = "unchecked";
            result.check.note = run.note;
            result.report = run.report;
        }
    }
    return result;
}

Problem sanitizerProbeProblem()
{
    auto p = parseProblem(kProbeProblem, "sanitizer-probe.toml");
    return p ? *p : Problem{};
}

std::string sanitizerProbeKernel() { return kProbeKernel; }

SanitizerProbe probeSanitizer(const SanitizerSetup &setup, const ClientTracker &track, const std::atomic<bool> *cancel)
{
    static std::mutex mutex;
    static std::map<std::string, SanitizerProbe> known;
    std::string key = joinArgv(setup.tool) + "\n" + joinArgv(setup.worker.argv);
    for (const std::string &e : setup.worker.env)
        key += "\n" + e;
    std::lock_guard lock(mutex); // two searches in one process probe once
    if (auto it = known.find(key); it != known.end())
        return it->second;

    const auto started = std::chrono::steady_clock::now();
    SanitizerProbe p;
    p.command = joinArgv(setup.tool);
    if (setup.tool.empty()) {
        p.reason = "compute-sanitizer was not found (" + sanitizerSearchPlaces() + ")";
        known[key] = p;
        return p;
    }
    p.version = toolVersion(setup.tool);
    SanitizeRequest r;
    r.key = "sanitizer-probe";
    r.source = kProbeKernel;
    r.kernels = {"kf_sanitizer_probe"};
    const Problem problem = sanitizerProbeProblem();
    for (SanitizerTool tool : {SanitizerTool::Memcheck, SanitizerTool::Racecheck}) {
        r.tools = {tool};
        SanitizeResult s = runSanitizer(setup, problem, r, track, cancel);
        if (s.cancelled) {
            p.cancelled = true;
            return p; // not kept: the next search asks again
        }
        const bool clean = s.check.outcome == "clean";
        std::string why;
        if (s.check.outcome == "finding")
            why = "it reports errors in a known-good kernel (" + s.check.note + ")";
        else if (!clean)
            why = s.check.note;
        if (tool == SanitizerTool::Memcheck) {
            p.memcheck = clean;
            if (!clean) {
                p.reason = "`" + p.command + "` does not work with this worker here: " + why;
                break;
            }
        } else {
            p.racecheck = clean;
            if (!clean)
                p.reason = "racecheck does not work here: " + why;
        }
    }
    p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    known[key] = p;
    return p;
}

} // namespace kf
