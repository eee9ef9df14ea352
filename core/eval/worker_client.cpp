#include "eval/worker_client.h"

#include "gpu/physical_floor.h"
#include "kernel/candidate.h"
#include "util/base64.h"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <unistd.h>

namespace kf {

using nlohmann::json;

struct WorkerReply {
    enum class Kind { Ok, Refused, Died, TimedOut, Garbled, Cancelled, NotRunning };
    Kind kind = Kind::Ok;
    json body;   // the reply object when Ok
    Error error; // the worker's error (Refused), or what went wrong
    milliseconds timeout{0};
};
using Kind = WorkerReply::Kind;

namespace {

std::string secondsText(milliseconds ms)
{
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, ms.count() % 1000 ? "%.1f s" : "%.0f s", double(ms.count()) / 1000);
    return buffer;
}

// The end of a worker's stderr, short enough for a candidate's reason.
std::string lastLines(const std::string &text, std::size_t maxLines = 30, std::size_t maxChars = 3000)
{
    std::string_view view(text);
    while (!view.empty() && (view.back() == '\n' || view.back() == ' '))
        view.remove_suffix(1);
    std::size_t start = view.size(), lines = 0;
    while (start > 0 && lines < maxLines && view.size() - start < maxChars) {
        --start;
        if (view[start] == '\n')
            ++lines;
    }
    if (start > 0 && view[start] == '\n')
        ++start;
    std::string out(view.substr(start));
    return start > 0 ? "…\n" + out : out;
}

std::string withTail(const std::string &message, const std::string &tail)
{
    auto last = lastLines(tail);
    return last.empty() ? message + "; it wrote nothing on stderr" : message + "; its stderr ends with:\n" + last;
}

std::string quotedLine(const std::string &line)
{
    std::string shown = line.size() > 200 ? line.substr(0, 200) + "…" : line;
    return json(shown).dump(-1, ' ', false, json::error_handler_t::replace);
}

// Candidate text comes from generators and people: invalid UTF-8 is replaced, never a throw.
std::string dumpLine(const json &message) { return message.dump(-1, ' ', false, json::error_handler_t::replace); }

Error errorFromJson(const json &reply)
{
    Error e{ErrorCode::Worker, "the worker refused the request without saying why", ""};
    auto it = reply.find("error");
    if (it == reply.end())
        return e;
    if (it->is_string())
        return Error{ErrorCode::Worker, it->get<std::string>(), ""};
    if (!it->is_object())
        return e;
    auto text = [&](const char *key, std::string &field) {
        if (auto f = it->find(key); f != it->end() && f->is_string())
            field = f->get<std::string>();
    };
    std::string code;
    text("code", code);
    if (!code.empty())
        e.code = errorCodeFrom(code);
    text("message", e.message);
    text("where", e.where);
    return e;
}

template <typename T>
Result<T> field(const json &body, const char *key, const char *op)
{
    try {
        return body.at(key).get<T>();
    } catch (const std::exception &ex) {
        return makeError(ErrorCode::Protocol, std::string("malformed reply to ") + op + ": " + ex.what());
    }
}

} // namespace

// ---- configuration ----------------------------------------------------------------------------

std::vector<std::string> splitCommandLine(const std::string &text)
{
    std::vector<std::string> out;
    std::string current;
    bool inWord = false;
    char quote = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (quote) {
            if (c == quote)
                quote = 0;
            else if (quote == '"' && c == '\\' && i + 1 < text.size() && (text[i + 1] == '"' || text[i + 1] == '\\'))
                current += text[++i];
            else
                current += c;
        } else if (c == '\'' || c == '"') {
            quote = c;
            inWord = true;
        } else if (c == '\\' && i + 1 < text.size()) {
            current += text[++i];
            inWord = true;
        } else if (std::isspace(static_cast<unsigned char>(c))) {
            if (inWord)
                out.push_back(std::move(current));
            current.clear();
            inWord = false;
        } else {
            current += c;
            inWord = true;
        }
    }
    if (inWord)
        out.push_back(std::move(current));
    return out;
}

std::vector<std::string> defaultWorkerArgv()
{
    namespace fs = std::filesystem;
    std::error_code ec;
    if (const char *env = std::getenv("KERNELFORGE_WORKER"); env && *env) {
        if (fs::is_regular_file(env, ec)) // a path with spaces stays one argument
            return {env};
        if (auto parts = splitCommandLine(env); !parts.empty())
            return parts;
    }
    // Installed, the worker sits next to the GUI and the CLI; in the build tree it is in a sibling.
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        for (const fs::path &candidate :
             {self.parent_path() / "kernelforge-worker", self.parent_path() / ".." / "worker" / "kernelforge-worker"})
            if (fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0)
                return {candidate.lexically_normal().string()};
    }
    return {"kernelforge-worker"};
}

milliseconds evalTimeout(double baselineMs, int trials, int timingTrials)
{
    constexpr double floorMs = 20'000;
    constexpr double capMs = 24.0 * 3600 * 1000; // keeps the arithmetic finite for absurd baselines
    double runs = std::max(0, trials) + std::max(0, timingTrials) + 10;
    double ms = std::isfinite(baselineMs) && baselineMs > 0 ? 50.0 * baselineMs * runs : 0;
    return milliseconds(std::llround(std::clamp(ms, floorMs, capMs)));
}

// ---- life cycle -------------------------------------------------------------------------------

WorkerClient::WorkerClient(WorkerConfig config) : m_config(std::move(config))
{
    if (m_config.argv.empty())
        m_config.argv = defaultWorkerArgv();
}

WorkerClient::~WorkerClient() { retire(true); }

Status WorkerClient::start()
{
    m_interrupted = false;
    return ensureRunning();
}

void WorkerClient::stop()
{
    retire(true);
    m_everStarted = false; // a deliberate stop is not a restart
}

std::optional<int> WorkerClient::quit(milliseconds wait)
{
    std::unique_ptr<Process> process;
    {
        std::lock_guard lock(m_processMutex);
        process = std::move(m_process);
    }
    const bool dead = m_needsRestart;
    m_needsRestart = false;
    m_everStarted = false;
    if (!process)
        return dead ? m_deadStatus : std::nullopt;
    const auto now = Clock::now();
    if (process->isRunning())
        process->writeLine(dumpLine({{"id", m_nextId++}, {"op", "quit"}}), now + std::chrono::seconds(1));
    process->closeStdin();
    const bool exited = process->waitForExit(now + wait);
    process->kill(); // the group: anything the command left behind; reaps the child
    process->drainStderr(Clock::now() + std::chrono::milliseconds(200));
    m_deadTail = process->stderrTail();
    m_deadExit = process->exitDescription();
    m_deadStatus = exited ? process->waitStatus() : std::nullopt;
    return m_deadStatus;
}

bool WorkerClient::running() { return m_process && !m_needsRestart && m_process->isRunning(); }

std::string WorkerClient::stderrTail() const
{
    std::lock_guard lock(m_processMutex);
    return m_process && !m_needsRestart ? m_process->stderrTail() : m_deadTail;
}

void WorkerClient::interrupt()
{
    m_interrupted = true;
    std::lock_guard lock(m_processMutex);
    if (m_process)
        m_process->signalGroup(SIGKILL);
}

// Ends the current worker: a polite quit when it is healthy, then EOF on its stdin, a short wait,
// and SIGKILL to its group for whatever is left (a wrapper's children included).
void WorkerClient::retire(bool graceful)
{
    std::unique_ptr<Process> process;
    {
        std::lock_guard lock(m_processMutex);
        process = std::move(m_process);
    }
    m_needsRestart = false;
    if (!process)
        return;
    auto now = Clock::now();
    if (graceful && process->isRunning())
        process->writeLine(dumpLine({{"id", m_nextId++}, {"op", "quit"}}), now + std::chrono::seconds(1));
    process->closeStdin();
    process->waitForExit(now + std::chrono::seconds(2));
    process->kill();
}

Status WorkerClient::ensureRunning()
{
    if (m_process && !m_needsRestart && m_process->isRunning())
        return Ok{};
    if (m_process)
        retire(false);
    if (auto started = spawnAndHandshake(); !started)
        return started;
    if (m_everStarted)
        ++m_restarts;
    m_everStarted = true;
    if (!m_problem)
        return Ok{};
    WorkerReply reply = exchange(loadRequest(*m_problem), m_config.loadTimeout, moduleBytes(*m_problem));
    auto loaded = reply.kind == Kind::Ok ? field<LoadedProblem>(reply.body, "problem", "load")
                                         : Result<LoadedProblem>(replyError(reply, "load"));
    if (!loaded) {
        m_needsRestart = true; // try again with a fresh worker next time
        Error e = loaded.error();
        e.message = "the restarted worker could not load the problem again: " + e.message;
        return e;
    }
    m_loaded = *loaded;
    return Ok{};
}

Status WorkerClient::spawnAndHandshake()
{
    const std::string command = "`" + joinArgv(m_config.argv) + "`";
    auto process = std::make_unique<Process>();
    ProcessOptions options;
    options.argv = m_config.argv;
    options.env = m_config.env;
    options.stderrLimit = m_config.stderrLimit;
    if (auto started = process->start(options); !started) {
        Error e = started.error();
        e.message += " (set KERNELFORGE_WORKER or the worker command in the settings)";
        return e;
    }
    {
        std::lock_guard lock(m_processMutex);
        m_process = std::move(process);
    }
    m_needsRestart = false;

    WorkerReply reply = exchange({{"op", "hello"}}, m_config.handshakeTimeout);
    Error failure;
    switch (reply.kind) {
    case Kind::Ok: {
        auto hello = field<Hello>(reply.body, "hello", "hello");
        if (!hello) {
            failure = makeError(ErrorCode::Protocol,
                                "the worker " + command +
                                    " does not speak the KernelForge worker protocol: " + hello.error().message);
            break;
        }
        if (hello->protocol != kProtocolVersion) {
            failure = makeError(ErrorCode::Protocol,
                                "the worker " + command + " speaks worker protocol version " +
                                    std::to_string(hello->protocol) + ", this engine speaks version " +
                                    std::to_string(kProtocolVersion) + "; install matching versions");
            break;
        }
        m_hello = *hello;
        return Ok{};
    }
    case Kind::Died:
        failure = makeError(
            ErrorCode::WorkerStart,
            withTail("the worker " + command + " exited before the handshake (" + m_deadExit + ")", m_deadTail));
        break;
    case Kind::TimedOut:
        failure = makeError(
            ErrorCode::WorkerStart,
            withTail("the worker " + command + " did not answer the handshake within " + secondsText(reply.timeout),
                     m_deadTail));
        break;
    case Kind::Garbled:
        failure = makeError(ErrorCode::Protocol,
                            "the worker " + command +
                                " does not speak the KernelForge worker protocol: " + reply.error.message);
        break;
    case Kind::Refused:
        failure = makeError(ErrorCode::WorkerStart,
                            "the worker " + command + " refused the handshake: " + reply.error.text());
        break;
    case Kind::Cancelled:
    case Kind::NotRunning:
        failure = replyError(reply, "the handshake");
        break;
    }
    retire(false);
    m_needsRestart = true;
    return failure;
}

// ---- one request ------------------------------------------------------------------------------

WorkerReply WorkerClient::call(json message, milliseconds timeout, std::string_view payload)
{
    // An interrupt that arrived between requests cancels this one (the worker is already dead).
    if (m_interrupted.exchange(false))
        return WorkerReply{Kind::Cancelled, {}, makeError(ErrorCode::Cancelled, "cancelled"), timeout};
    if (auto running = ensureRunning(); !running)
        return WorkerReply{Kind::NotRunning, {}, running.error(), timeout};
    return exchange(std::move(message), timeout, payload);
}

// After stdout closed: give the worker a moment to finish dying (so its exit status is the real
// one), sweep its group, and keep its last stderr lines for the report.
void WorkerClient::afterDeath()
{
    Process &p = *m_process;
    p.closeStdin();
    p.waitForExit(Clock::now() + std::chrono::seconds(2));
    p.kill();
    p.drainStderr(Clock::now() + std::chrono::milliseconds(500));
    m_deadTail = p.stderrTail();
    m_deadExit = p.exitDescription();
    m_deadStatus = p.waitStatus();
    m_needsRestart = true;
}

WorkerReply WorkerClient::exchange(json message, milliseconds timeout, std::string_view payload)
{
    if (!m_process)
        return WorkerReply{Kind::NotRunning, {}, makeError(ErrorCode::Worker, "no worker is running"), timeout};
    Process &p = *m_process;
    const int id = m_nextId++;
    message["id"] = id;
    const auto deadline = Clock::now() + timeout;

    auto died = [&]() {
        afterDeath();
        if (m_interrupted.exchange(false))
            return WorkerReply{Kind::Cancelled, {}, makeError(ErrorCode::Cancelled, "cancelled"), timeout};
        return WorkerReply{
            Kind::Died, {}, makeError(ErrorCode::Crashed, "the worker died (" + m_deadExit + ")"), timeout};
    };
    auto killed = [&](Kind kind, Error error) {
        p.kill();
        p.drainStderr(Clock::now() + std::chrono::milliseconds(200));
        m_deadTail = p.stderrTail();
        m_deadExit = p.exitDescription();
        m_deadStatus.reset(); // killed: its status says nothing about how it ran
        m_needsRestart = true;
        if (m_interrupted.exchange(false))
            return WorkerReply{Kind::Cancelled, {}, makeError(ErrorCode::Cancelled, "cancelled"), timeout};
        return WorkerReply{kind, {}, std::move(error), timeout};
    };

    switch (p.writeLine(dumpLine(message), deadline, payload)) {
    case IoStatus::Ok:
        break;
    // A worker that already exited may have left lines behind (a program that is no worker at
    // all prints its own text and quits): read them before calling it dead.
    case IoStatus::Eof:
        break;
    case IoStatus::Timeout:
        return killed(Kind::TimedOut, makeError(ErrorCode::Timeout, "the worker stopped reading"));
    case IoStatus::Error:
        return killed(Kind::Garbled, makeError(ErrorCode::Protocol, p.lastError()));
    }

    for (;;) {
        std::string line;
        switch (p.readLine(line, deadline)) {
        case IoStatus::Ok:
            break;
        case IoStatus::Eof:
            return died();
        case IoStatus::Timeout:
            return killed(Kind::TimedOut, makeError(ErrorCode::Timeout, "no reply"));
        case IoStatus::Error:
            return killed(Kind::Garbled, makeError(ErrorCode::Protocol, "the worker wrote " + p.lastError()));
        }
        if (line.find_first_not_of(" \t") == std::string::npos)
            continue;
        json reply = json::parse(line, nullptr, false);
        if (reply.is_discarded() || !reply.is_object())
            return killed(Kind::Garbled,
                          makeError(ErrorCode::Protocol,
                                    "the worker wrote a line that is not a JSON object: " + quotedLine(line)));
        if (auto event = reply.find("event"); event != reply.end()) {
            auto text = reply.find("message");
            if (m_config.onProgress && text != reply.end() && text->is_string())
                m_config.onProgress(text->get<std::string>());
            continue;
        }
        auto replyId = reply.find("id");
        auto ok = reply.find("ok");
        if (replyId == reply.end() || *replyId != id || ok == reply.end() || !ok->is_boolean())
            return killed(
                Kind::Garbled,
                makeError(ErrorCode::Protocol,
                          "expected the reply to request " + std::to_string(id) + ", got " + quotedLine(line)));
        if (ok->get<bool>())
            return WorkerReply{Kind::Ok, std::move(reply), {}, timeout};
        Error error = errorFromJson(reply);
        if (error.code == ErrorCode::Crashed) // the worker exits after a fault: its CUDA context is dead
            m_needsRestart = true;
        return WorkerReply{Kind::Refused, {}, std::move(error), timeout};
    }
}

Error WorkerClient::replyError(const WorkerReply &reply, const std::string &what) const
{
    switch (reply.kind) {
    case Kind::Ok:
        return makeError(ErrorCode::Protocol, "unexpected reply to " + what);
    case Kind::Refused:
    case Kind::NotRunning:
        return reply.error;
    case Kind::Died:
        return makeError(ErrorCode::Crashed,
                         withTail("the worker died during " + what + " (" + m_deadExit + ")", m_deadTail));
    case Kind::TimedOut:
        return makeError(ErrorCode::Timeout,
                         "no answer to " + what + " within " + secondsText(reply.timeout) + "; the worker was killed");
    case Kind::Garbled:
        return makeError(ErrorCode::Protocol, "protocol error during " + what + ": " + reply.error.message);
    case Kind::Cancelled:
        return makeError(ErrorCode::Cancelled, what + " was cancelled");
    }
    return reply.error;
}

EvalResult WorkerClient::failedResult(const WorkerReply &reply, const std::string &source, Policy policy,
                                      const std::string &what) const
{
    EvalResult result;
    result.policy = policy;
    if (auto candidate = parseCandidate(source); candidate)
        result.precision = candidate->precision;
    if (reply.kind == Kind::TimedOut) {
        result.verdict = Verdict::TimedOut;
        result.reason = "no result within " + secondsText(reply.timeout) + " while " + what +
            " (the limit is max(20 s, 50 × the eager baseline × launch sequences)); the worker was killed";
    } else {
        result.verdict = Verdict::Crashed;
        result.reason = withTail("the worker died while " + what + " (" + m_deadExit + ")", m_deadTail);
    }
    return result;
}

Result<json> WorkerClient::request(json message, milliseconds timeout)
{
    std::string op = message.value("op", "request");
    WorkerReply reply = call(std::move(message), timeout);
    if (reply.kind != Kind::Ok)
        return replyError(reply, op);
    return std::move(reply.body);
}

// ---- operations -------------------------------------------------------------------------------

Result<Hello> WorkerClient::hello()
{
    WorkerReply reply = call({{"op", "hello"}}, m_config.requestTimeout);
    if (reply.kind != Kind::Ok)
        return replyError(reply, "hello");
    auto hello = field<Hello>(reply.body, "hello", "hello");
    if (hello)
        m_hello = *hello;
    return hello;
}

Result<LoadedProblem> WorkerClient::load(const Problem &problem)
{
    // Forget the old problem first, so that a restart during this load does not send it again.
    m_problem.reset();
    m_loaded.reset();
    m_baselineMs = 0;
    ProblemText sent{problem.text, problem.path, problem.variant, problem.module};
    WorkerReply reply = call(loadRequest(sent), m_config.loadTimeout, moduleBytes(sent));
    if (reply.kind != Kind::Ok)
        return replyError(reply, "loading " + (problem.path.empty() ? problem.name : problem.path));
    auto loaded = field<LoadedProblem>(reply.body, "problem", "load");
    if (loaded) {
        m_problem = std::move(sent);
        m_loaded = *loaded;
    }
    return loaded;
}

// A module's bytes follow the request raw (docs/protocol.md): base64 inside the JSON, then inside
// the TOML, cost a large model a minute of copying and parsing on both sides.
json WorkerClient::loadRequest(const ProblemText &problem)
{
    json message{{"op", "load"}, {"problem", problem.text}, {"path", problem.path}, {"variant", problem.variant}};
    if (!moduleBytes(problem).empty())
        message["module_bytes"] = problem.module->size();
    return message;
}

std::string_view WorkerClient::moduleBytes(const ProblemText &problem)
{
    return problem.module ? std::string_view(*problem.module) : std::string_view();
}

Result<BaselineResult> WorkerClient::baseline(int trials)
{
    WorkerReply reply = call({{"op", "baseline"}, {"trials", trials}}, m_config.baselineTimeout);
    if (reply.kind != Kind::Ok)
        return replyError(reply, "the baseline");
    auto timing = field<Timing>(reply.body, "timing", "baseline");
    if (!timing)
        return timing.error();
    BaselineResult result{*timing, reply.body.value("flags", json::object())};
    m_baselineMs = result.timing.medianMs;
    return result;
}

Result<Ceilings> WorkerClient::ceilings()
{
    if (m_ceilings)
        return *m_ceilings;
    WorkerReply reply = call({{"op", "ceilings"}}, m_config.ceilingsTimeout);
    if (reply.kind != Kind::Ok)
        return replyError(reply, "measuring the ceilings");
    auto ceilings = field<Ceilings>(reply.body, "ceilings", "ceilings");
    if (ceilings)
        m_ceilings = *ceilings;
    return ceilings;
}

Result<CompileOutput> WorkerClient::compile(const std::string &source, const std::vector<std::string> &kernels,
                                            const std::string &arch)
{
    json message{{"op", "compile"}, {"source", source}, {"kernels", kernels}, {"arch", arch}};
    WorkerReply reply = call(message, m_config.compileTimeout);
    if (reply.kind == Kind::Died || reply.kind == Kind::TimedOut) {
        // NVRTC dying or looping on a source is that source's failure, like a compile error.
        Error error = replyError(reply, "the compile");
        CompileOutput output;
        output.arch = arch;
        output.log = error.message;
        output.diagnostics.push_back(Diagnostic{0, "error", error.message});
        return output;
    }
    if (reply.kind != Kind::Ok)
        return replyError(reply, "the compile");
    return field<CompileOutput>(reply.body, "compile", "compile");
}

Result<EvalResult> WorkerClient::verify(const std::string &key, const std::string &source, const std::string &cubin,
                                        Policy policy, int trials, std::optional<milliseconds> timeout, bool raceRerun,
                                        std::optional<std::uint64_t> seed,
                                        const std::map<std::string, std::string> &loweredNames)
{
    json message{
        {"op", "verify"}, {"key", key}, {"candidate", source}, {"policy", toString(policy)}, {"trials", trials}};
    if (seed)
        message["seed"] = *seed;
    if (!raceRerun)
        message["race_rerun"] = false; // a key older workers ignore: they run it all the same
    if (!cubin.empty()) {
        message["cubin"] = base64Encode(cubin);
        if (!loweredNames.empty())
            message["lowered_names"] = loweredNames;
    }
    WorkerReply reply = call(message, timeout.value_or(evalTimeout(m_baselineMs, trials, 0)));
    if (reply.kind == Kind::Died || reply.kind == Kind::TimedOut)
        return failedResult(reply, source, policy, "verifying");
    if (reply.kind != Kind::Ok)
        return replyError(reply, "verify");
    auto result = field<EvalResult>(reply.body, "result", "verify");
    if (result && result->verdict == Verdict::Crashed)
        m_needsRestart = true;
    if (result)
        fillFloor(*result);
    return result;
}

Result<TimedRun> WorkerClient::time(const std::string &key, int trials, std::optional<milliseconds> timeout,
                                    bool checked)
{
    json message{{"op", "time"}, {"key", key}, {"trials", trials}};
    if (!checked)
        message["checked"] = false;
    // Each timed run is poisoned and compared as well: twice the runs in the time-out.
    WorkerReply reply = call(message, timeout.value_or(evalTimeout(m_baselineMs, 0, 2 * trials)));
    if (reply.kind != Kind::Ok)
        return replyError(reply, "timing");
    return field<TimedRun>(reply.body, "timed", "time");
}

Result<EvalResult> WorkerClient::evaluate(const std::string &key, const std::string &source, const std::string &cubin,
                                          Policy policy, int trials, int timingTrials,
                                          std::optional<milliseconds> timeout, std::optional<std::uint64_t> seed,
                                          const std::map<std::string, std::string> &loweredNames)
{
    json message{{"op", "evaluate"},           {"key", key},       {"candidate", source},
                 {"policy", toString(policy)}, {"trials", trials}, {"timing_trials", timingTrials}};
    if (seed)
        message["seed"] = *seed;
    if (!cubin.empty()) {
        message["cubin"] = base64Encode(cubin);
        if (!loweredNames.empty())
            message["lowered_names"] = loweredNames;
    }
    WorkerReply reply = call(message, timeout.value_or(evalTimeout(m_baselineMs, trials, 2 * timingTrials)));
    if (reply.kind == Kind::Died || reply.kind == Kind::TimedOut)
        return failedResult(reply, source, policy, "evaluating");
    if (reply.kind != Kind::Ok)
        return replyError(reply, "evaluate");
    auto result = field<EvalResult>(reply.body, "result", "evaluate");
    if (result && result->verdict == Verdict::Crashed)
        m_needsRestart = true;
    if (result)
        fillFloor(*result);
    return result;
}

Status WorkerClient::release(const std::string &key)
{
    if (!m_process || m_needsRestart)
        return Ok{}; // the module went with the worker
    WorkerReply reply = call({{"op", "release"}, {"key", key}}, m_config.requestTimeout);
    if (reply.kind != Kind::Ok)
        return replyError(reply, "release");
    return Ok{};
}

void WorkerClient::fillFloor(EvalResult &result) const
{
    if (m_loaded && m_ceilings && result.floorMs <= 0)
        result.floorMs = floorMs(m_loaded->flops, m_loaded->bytes, result.precision, *m_ceilings);
}

} // namespace kf
