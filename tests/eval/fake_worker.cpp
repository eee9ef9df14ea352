// A stand-in for kernelforge-worker that speaks the worker protocol without a GPU or libtorch.
// Its behaviour is chosen by options and by markers in the candidate text:
//   options: --compile (compile-only mode), --protocol N, --exit-early, --garbage-hello,
//            --hang-hello, --log FILE (appends "start", "load", "verify", "time", "compile" lines
//            and "module N" for the N raw bytes after a load
//            with the pid and CLOCK_MONOTONIC nanoseconds), --time-ms N, --verify-ms N,
//            --compile-ms N (each compile takes that long, as NVRTC with the CUDA headers does),
//            --start-ms N (before it reads its first request, as CUDA and libtorch take to start),
//            --load-ms N (a load takes that long)
//   markers: FAKE_CRASH (dies by SIGSEGV), FAKE_FAULT (replies crashed, then exits), FAKE_HANG,
//            FAKE_GARBAGE (a non-JSON line), FAKE_WRONG, FAKE_FAST (times below any floor: suspect),
//            FAKE_INCONSISTENT (a timed run fails its check), FAKE_ENGINE (an engine error, code "engine"),
//            FAKE_PROGRESS (two progress events first), FAKE_REFUSE (an error reply),
//            FAKE_COMPILE_ERROR, FAKE_MS=<number> (the median time it reports, in ms; 0.5 without it),
//            FAKE_SMEM=<bytes> (the static shared memory its compile reports; 0 without it)
//   under tests/eval/fake_sanitizer (KF_FAKE_SANITIZER_TOOL set): FAKE_OOB logs a memcheck error
//            and then faults as a kernel stopped by memcheck does; FAKE_SMEM_RACE logs a racecheck
//            hazard; FAKE_TOOL_FAILURE makes racecheck report its own failure (an Internal
//            Sanitizer Error); each run appends "sanitize TOOL KEY" to the --log file
#include "eval/protocol.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

using nlohmann::json;

namespace {

struct Options {
    bool compileOnly = false;
    int protocol = kf::kProtocolVersion;
    bool exitEarly = false, garbageHello = false, hangHello = false;
    std::string log;
    int timeMs = 30, verifyMs = 0, compileMs = 0, startMs = 0, loadMs = 0;
} opts;

bool loaded = false;
std::set<std::string> keys, fastKeys, inconsistentKeys;
std::map<std::string, double> keyMs; // FAKE_MS=<number> per loaded key

long long monotonicNs()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

void logLine(const std::string &what)
{
    if (opts.log.empty())
        return;
    std::string line = what + "\n";
    int fd = ::open(opts.log.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) {
        (void)!::write(fd, line.data(), line.size()); // one write: lines from several workers stay whole
        ::close(fd);
    }
}

std::string pid() { return std::to_string(::getpid()); }

void send(const json &j) { std::cout << j.dump() << std::endl; }

void reply(int id, json body)
{
    body["id"] = id;
    body["ok"] = true;
    send(body);
}

void fail(int id, const std::string &code, const std::string &message)
{
    send({{"id", id}, {"ok", false}, {"error", {{"code", code}, {"message", message}, {"where", "fake"}}}});
}

[[noreturn]] void hang()
{
    for (;;)
        pause();
}

[[noreturn]] void crash(const std::string &key)
{
    std::fprintf(stderr, "fake worker: simulated illegal address in %s\n", key.c_str());
    std::fflush(stderr);
    std::signal(SIGSEGV, SIG_DFL);
    std::raise(SIGSEGV);
    std::_Exit(99);
}

bool has(const std::string &text, const char *marker) { return text.find(marker) != std::string::npos; }

// What a real worker's checked timed runs answer: inconsistent (no time) for FAKE_INCONSISTENT,
// suspect below the physical floor for FAKE_FAST, else correct.
kf::TimedRun timedRun(const kf::Timing &t, bool fast, bool inconsistent)
{
    kf::TimedRun out;
    out.check.runs = t.trials;
    out.check.inputSets = 5;
    if (inconsistent) {
        out.verdict = kf::Verdict::Inconsistent;
        out.reason = "timed run 7 of 100 (input set of trial 2, normal) failed its check on output 'out'";
        return out;
    }
    out.timing = t;
    if (fast) {
        out.verdict = kf::Verdict::Suspect;
        out.reason = "median 1e-06 ms is below the physical floor";
    }
    return out;
}

kf::Timing timeIt(int id, const std::string &key, bool fast, json &extra)
{
    long long start = monotonicNs();
    std::this_thread::sleep_for(std::chrono::milliseconds(opts.timeMs));
    long long end = monotonicNs();
    logLine("time " + pid() + " " + std::to_string(start) + " " + std::to_string(end) + " " + key);
    (void)id;
    kf::Timing t;
    auto ms = keyMs.find(key);
    t.medianMs = fast ? 1e-6 : ms != keyMs.end() ? ms->second : 0.5;
    t.minMs = t.medianMs * 0.9;
    t.maxMs = t.medianMs * 1.2;
    t.meanMs = t.medianMs;
    t.p10Ms = t.minMs;
    t.p90Ms = t.maxMs;
    t.trials = 100;
    extra = {{"started_ns", start}, {"ended_ns", end}};
    return t;
}

void verifyOp(int id, const json &req, bool thenTime)
{
    std::string key = req.value("key", "");
    std::string source = req.value("candidate", "");
    if (!loaded)
        return fail(id, "no-problem", "no problem loaded");
    logLine("verify " + pid() + " " + key);
    if (has(source, "FAKE_CRASH"))
        crash(key);
    if (has(source, "FAKE_HANG"))
        hang();
    if (has(source, "FAKE_GARBAGE")) {
        std::cout << "this is not json" << std::endl;
        return;
    }
    if (has(source, "FAKE_REFUSE"))
        return fail(id, "bad-request", "refused on purpose");
    if (has(source, "FAKE_ENGINE"))
        return fail(id, "engine", "out of GPU memory while verifying: tried to allocate 12.8 GiB");
    if (has(source, "FAKE_PROGRESS")) {
        send({{"id", id}, {"event", "progress"}, {"message", "trial 1 of 2"}});
        send({{"id", id}, {"event", "progress"}, {"message", "trial 2 of 2"}});
    }
    if (opts.verifyMs > 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(opts.verifyMs));
    const char *sanitizer = std::getenv("KF_FAKE_SANITIZER_TOOL");
    const std::string tool = sanitizer ? sanitizer : "";
    if (!tool.empty()) {
        logLine("sanitize " + tool + " " + key);
        const char *log = std::getenv("KF_FAKE_SANITIZER_LOG");
        auto report = [&](const std::string &text) {
            if (!log || !*log)
                return;
            int fd = ::open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
            if (fd >= 0) {
                (void)!::write(fd, text.data(), text.size());
                ::close(fd);
            }
        };
        if (tool == "memcheck" && has(source, "FAKE_OOB")) {
            report(
                "========= Invalid __global__ write of size 4 bytes\n"
                "=========     at k+0x90 in candidate.cu:2\n"
                "=========     by thread (31,0,0) in block (0,0,0)\n"
                "=========     Address 0x7f3a00002000 is 0 bytes after the nearest allocation of size 32768 bytes\n");
            kf::EvalResult r;
            r.verdict = kf::Verdict::Crashed;
            r.reason = "the kernel faulted: unspecified launch failure (error 719)";
            reply(id, {{"result", r}});
            std::exit(3);
        }
        if (tool == "racecheck" && has(source, "FAKE_SMEM_RACE"))
            report("========= Error: Race reported between Write access at k+0x50 in candidate.cu:2\n"
                   "=========     and Read access at k+0x80 in candidate.cu:2 [248 hazards]\n");
        if (tool == "racecheck" && has(source, "FAKE_TOOL_FAILURE"))
            report("========= Internal Sanitizer Error: The Sanitizer failed to handle a hardware exception.\n");
    }
    kf::EvalResult r;
    r.policy = kf::parsePolicy(req.value("policy", "strict")).value_or(kf::Policy::Strict);
    r.verdict = kf::Verdict::Correct;
    r.reason = "checked " + key;
    if (has(source, "FAKE_FAULT")) {
        r.verdict = kf::Verdict::Crashed;
        r.reason = "an illegal memory access was encountered (error 700) in " + key;
        reply(id, {{"result", r}});
        std::fprintf(stderr, "fake worker: CUDA context lost, exiting\n");
        std::exit(1);
    }
    if (has(source, "FAKE_WRONG")) {
        r.verdict = kf::Verdict::Wrong;
        r.reason = "trial 1: max scaled error 0.5 for " + key;
    }
    int trials = req.value("trials", 5);
    r.seed = req.value("seed", std::uint64_t(987654321));
    for (int i = 0; i < trials; ++i) {
        kf::TrialResult t;
        t.index = i;
        t.seed = 1000 + std::uint64_t(i);
        t.distribution = "uniform";
        t.passed = r.verdict == kf::Verdict::Correct;
        t.tolerance = 1e-4;
        r.trials.push_back(t);
    }
    keys.insert(key);
    if (has(source, "FAKE_FAST"))
        fastKeys.insert(key);
    // A search test scripts which candidate wins by the time each one reports.
    if (auto at = source.find("FAKE_MS="); at != std::string::npos)
        keyMs[key] = std::atof(source.c_str() + at + 8);
    else
        keyMs.erase(key);
    if (has(source, "FAKE_INCONSISTENT"))
        inconsistentKeys.insert(key);
    json extra;
    if (thenTime && r.verdict == kf::Verdict::Correct)
        kf::applyTimedRun(r,
                          timedRun(timeIt(id, key, has(source, "FAKE_FAST"), extra), has(source, "FAKE_FAST"),
                                   has(source, "FAKE_INCONSISTENT")));
    reply(id, {{"result", r}});
}

void compileOp(int id, const json &req)
{
    std::string source = req.value("source", "");
    logLine("compile " + pid());
    if (has(source, "FAKE_CRASH"))
        crash("compile");
    if (has(source, "FAKE_HANG"))
        hang();
    if (opts.compileMs > 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(opts.compileMs));
    kf::CompileOutput out;
    out.arch = req.value("arch", "sm_90a");
    out.log = "compiled by " + pid();
    if (has(source, "FAKE_COMPILE_ERROR")) {
        out.diagnostics.push_back({3, "error", "identifier \"x\" is undefined"});
        out.log = "candidate.cu(3): error: identifier \"x\" is undefined";
    } else {
        out.ok = true;
        out.cubin = std::string("\x7f"
                                "ELF\0\xff",
                                6) +
            source; // binary, with a NUL and 0xff
        for (const auto &k : req.value("kernels", std::vector<std::string>{}))
            out.loweredNames[k] = "_Z" + k;
        int shared = 0;
        if (auto at = source.find("FAKE_SMEM="); at != std::string::npos)
            shared = std::atoi(source.c_str() + at + 10);
        out.resources["k"] = kf::KernelResources{32, shared, 0, 0, 0};
    }
    reply(id, {{"compile", out}});
}

json hello()
{
    kf::Hello h;
    h.protocol = opts.protocol;
    h.worker = "fake 1.0";
    if (const char *tag = std::getenv("KF_FAKE_TAG"))
        h.worker += std::string(" tag=") + tag;
    h.torch = opts.compileOnly ? "" : "2.11.0";
    h.cudaRuntime = 13000;
    h.cudaDriver = 13000;
    h.gpu.present = !opts.compileOnly;
    h.gpu.name = "Fake GPU";
    if (const char *visible = std::getenv("CUDA_VISIBLE_DEVICES"))
        h.gpu.name += std::string(" [") + visible + "]";
    h.gpu.arch = "sm_90a";
    h.gpu.major = 9;
    h.gpu.sms = 132;
    return {{"hello", h}};
}

} // namespace

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto next = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
        if (a == "--compile")
            opts.compileOnly = true;
        else if (a == "--protocol")
            opts.protocol = std::atoi(next().c_str());
        else if (a == "--exit-early")
            opts.exitEarly = true;
        else if (a == "--garbage-hello")
            opts.garbageHello = true;
        else if (a == "--hang-hello")
            opts.hangHello = true;
        else if (a == "--log")
            opts.log = next();
        else if (a == "--time-ms")
            opts.timeMs = std::atoi(next().c_str());
        else if (a == "--verify-ms")
            opts.verifyMs = std::atoi(next().c_str());
        else if (a == "--compile-ms")
            opts.compileMs = std::atoi(next().c_str());
        else if (a == "--start-ms")
            opts.startMs = std::atoi(next().c_str());
        else if (a == "--load-ms")
            opts.loadMs = std::atoi(next().c_str());
    }
    if (opts.exitEarly) {
        std::fprintf(stderr, "fake worker: cannot open libcuda.so.1\n");
        return 3;
    }
    logLine("start " + pid());
    std::this_thread::sleep_for(std::chrono::milliseconds(opts.startMs));
    if (opts.garbageHello)
        std::cout << "Welcome to a shell that is not a worker" << std::endl;

    std::string line;
    while (std::getline(std::cin, line)) {
        json req = json::parse(line, nullptr, false);
        if (req.is_discarded())
            return 2;
        int id = req.value("id", 0);
        std::string op = req.value("op", "");
        if (req.contains("module_bytes")) { // raw bytes follow the line, as for the real worker
            std::string bytes(req.value("module_bytes", std::size_t(0)), '\0');
            if (!std::cin.read(bytes.data(), std::streamsize(bytes.size())))
                return 2;
            logLine("module " + std::to_string(bytes.size()));
        }
        if (op == "hello") {
            if (opts.hangHello)
                hang();
            reply(id, hello());
        } else if (op == "quit") {
            logLine("quit " + pid());
            reply(id, json::object());
            return 0;
        } else if (op == "compile") {
            compileOp(id, req);
        } else if (opts.compileOnly) {
            fail(id, "unsupported", "this worker only compiles (--compile)");
        } else if (op == "load") {
            loaded = !req.value("problem", "").empty();
            logLine("load " + pid());
            std::this_thread::sleep_for(std::chrono::milliseconds(opts.loadMs));
            kf::LoadedProblem p;
            p.flops = 1e6;
            p.flopsSource = "declared";
            p.bytes = 8e6;
            // softmax(x, dim=1) over [8, 1024], as the real worker reports it, so the built-in
            // generator can plan for a problem with such an input x (the suite tests).
            p.graph.push_back(kf::OpNode{"aten::softmax",
                                         {"%x", "%1", "%2"},
                                         {"%3"},
                                         {{8, 1024}, {}, {}},
                                         {{8, 1024}},
                                         json::array({nullptr, 1, nullptr}),
                                         1e6});
            p.outputs.push_back(kf::TensorSpec{"out", {8, 1024}, kf::DType::F32});
            reply(id, {{"problem", p}});
        } else if (op == "baseline") {
            kf::Timing t;
            t.medianMs = 2.0;
            t.trials = req.value("trials", 100);
            reply(id, {{"timing", t}, {"flags", {{"cudnn_tf32", true}, {"matmul_tf32", false}}}});
        } else if (op == "ceilings") {
            kf::Ceilings c;
            c.bandwidthGBs = 4000;
            c.tflops = {{"fp32", 60}, {"tf32", 400}, {"fp16", 800}, {"bf16", 800}};
            reply(id, {{"ceilings", c}});
        } else if (op == "verify" || op == "evaluate") {
            verifyOp(id, req, op == "evaluate");
        } else if (op == "time") {
            std::string key = req.value("key", "");
            if (!keys.count(key)) {
                fail(id, "unknown-key", "no module loaded under \"" + key + "\"");
                continue;
            }
            json extra;
            kf::Timing t = timeIt(id, key, fastKeys.count(key) > 0, extra);
            json body{{"timed", timedRun(t, fastKeys.count(key) > 0, inconsistentKeys.count(key) > 0)}};
            if (body["timed"].contains("timing"))
                body["timed"]["timing"].update(extra);
            reply(id, body);
        } else if (op == "release") {
            keys.erase(req.value("key", ""));
            keyMs.erase(req.value("key", ""));
            reply(id, json::object());
        } else {
            fail(id, "unknown-op", "unknown op \"" + op + "\"");
        }
    }
    return 0;
}
