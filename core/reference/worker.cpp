#include "worker.h"

#include "ceilings.h"
#include "check_kernels.h"
#include "evaluator.h"
#include "torch_shim.h"
#include "util/base64.h"
#include "worker/compiler.h"
#include "worker/runtime.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <unistd.h>

namespace kf {

namespace {

// The protocol owns the real stdout; everything else that prints (libtorch warnings, a kernel's
// printf) goes to stderr, so a stray line can never corrupt the stream.
class Channel {
public:
    Channel()
    {
        const int fd = dup(STDOUT_FILENO);
        dup2(STDERR_FILENO, STDOUT_FILENO);
        m_out = fdopen(fd, "w");
    }
    void send(const nlohmann::json &j)
    {
        const std::string line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
        std::fwrite(line.data(), 1, line.size(), m_out);
        std::fflush(m_out);
    }

private:
    FILE *m_out = nullptr;
};

nlohmann::json errorJson(const Error &e)
{
    return {{"code", toString(e.code)}, {"message", e.message}, {"where", e.where}};
}

struct State {
    bool compileOnly = false;
    GpuInfo gpu;
    std::int64_t capacity = 0; // GPU bytes this worker may plan for
    Ceilings ceilings;
    bool haveCeilings = false;
    std::unique_ptr<ref::Evaluator> evaluator;
    std::optional<std::string> payload; // the raw bytes that followed this request's line
};

// A worker under compute-sanitizer (KERNELFORGE_NO_CEILINGS, set by the gate) reports findings,
// not times: it leaves the ceilings alone, which it would measure a hundred times too slow there
// and, before the cache checked what it stores, kept for every worker after it.
const Ceilings &ceilingsOf(State &s)
{
    static const bool skip = [] {
        const char *v = std::getenv("KERNELFORGE_NO_CEILINGS");
        return v && *v && std::string(v) != "0";
    }();
    if (!s.haveCeilings && s.gpu.present && !skip) {
        s.ceilings = ref::cachedCeilings(s.gpu);
        s.haveCeilings = true;
    }
    return s.ceilings;
}

// What this worker may plan to use of the GPU: what was free when it started, less a margin for
// libtorch's workspaces and the driver, shared with the other workers a pool runs on the same GPU.
std::int64_t gpuCapacity(const State &s)
{
    if (s.compileOnly || !s.gpu.present)
        return 0;
    std::size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) != cudaSuccess)
        return 0;
    int share = 1;
    if (const char *n = std::getenv("KERNELFORGE_WORKERS_PER_GPU"); n && std::atoi(n) > 1)
        share = std::atoi(n);
    const std::int64_t margin = std::min<std::int64_t>(std::int64_t(total) / 20, 4ll << 30);
    return std::max<std::int64_t>(0, (std::int64_t(free) - margin) / share);
}

Result<nlohmann::json> handle(State &s, const nlohmann::json &req)
{
    const std::string op = req.value("op", "");
    if (op == "hello") {
        Hello h;
        h.worker = KF_VERSION;
        h.torch = s.compileOnly ? "" : shim::torchVersion();
        cudaRuntimeGetVersion(&h.cudaRuntime);
        cudaDriverGetVersion(&h.cudaDriver);
        h.gpu = s.gpu;
        return nlohmann::json{{"hello", h}};
    }
    if (op == "compile") {
        CompileOptions o;
        o.arch = req.value("arch", s.gpu.arch.empty() ? std::string("sm_90a") : s.gpu.arch);
        o.extra = req.value("options", std::vector<std::string>{});
        o.cacheDir = req.value("cache_dir", defaultCompileCacheDir());
        auto c = compileCuda(req.at("source").get<std::string>(), req.value("kernels", std::vector<std::string>{}), o);
        if (!c)
            return c.error();
        return nlohmann::json{{"compile", *c}};
    }
    if (op == "compile_checks") { // the engine's own check kernels, for a test that they build
        auto c = ref::compileCheckKernels(req.value("arch", s.gpu.arch.empty() ? std::string("sm_90a") : s.gpu.arch));
        if (!c)
            return c.error();
        return nlohmann::json{{"compile", *c}};
    }
    if (s.compileOnly)
        return makeError(ErrorCode::Unsupported,
                         "this worker runs in compile-only mode and does not take '" + op + "'");
    if (op == "load") {
        auto p = parseProblem(req.at("problem").get<std::string>(), req.value("path", "problem.toml"),
                              req.value("variant", ""), !s.payload);
        if (!p)
            return p.error();
        if (s.payload)
            p->module = std::make_shared<const std::string>(std::move(*s.payload));
        s.evaluator.reset();
        auto e = ref::Evaluator::load(*p, s.gpu, s.capacity);
        if (!e)
            return e.error();
        s.evaluator = std::move(*e);
        s.evaluator->setCeilings(ceilingsOf(s));
        return nlohmann::json{{"problem", s.evaluator->loaded()}};
    }
    if (op == "ceilings") {
        if (!s.gpu.present)
            return makeError(ErrorCode::NoGpu, "ceilings need an NVIDIA GPU: " + s.gpu.reason);
        return nlohmann::json{{"ceilings", ceilingsOf(s)}};
    }
    static const std::set<std::string> kProblemOps{"baseline", "verify", "evaluate", "time", "trial_data", "release"};
    if (!kProblemOps.count(op))
        return makeError(ErrorCode::UnknownOp, "unknown op '" + op + "'");
    if (!s.evaluator)
        return makeError(ErrorCode::NoProblem, "'" + op + "' needs a problem: send 'load' first");
    if (op == "baseline") {
        auto t = s.evaluator->baseline(req.value("trials", 100));
        if (!t)
            return t.error();
        return nlohmann::json{{"timing", *t}, {"flags", shim::precisionFlags()}};
    }
    if (op == "verify" || op == "evaluate") {
        ref::VerifyRequest v;
        v.key = req.value("key", "candidate");
        v.source = req.at("candidate").get<std::string>();
        if (req.contains("cubin") && req["cubin"].is_string())
            v.cubin = base64Decode(req["cubin"].get<std::string>());
        v.loweredNames = req.value("lowered_names", std::map<std::string, std::string>{});
        if (auto p = parsePolicy(req.value("policy", "strict")))
            v.policy = *p;
        v.trials = req.value("trials", 5);
        v.raceRerun = req.value("race_rerun", true);
        if (auto seed = req.find("seed"); seed != req.end() && seed->is_number_unsigned())
            v.seed = seed->get<std::uint64_t>();
        auto verified = s.evaluator->verify(v);
        if (!verified)
            return verified.error(); // the engine could not judge it: no verdict on the kernel
        EvalResult r = *verified;
        const int timingTrials = req.value("timing_trials", 100);
        if (op == "evaluate" && r.verdict == Verdict::Correct && timingTrials > 0) {
            auto t = s.evaluator->time(v.key, timingTrials);
            if (t) {
                applyTimedRun(r, *t);
            } else if (t.error().code == ErrorCode::Engine) {
                s.evaluator->release(v.key);
                return t.error();
            } else {
                r.verdict = s.evaluator->contextLost() ? Verdict::Crashed : Verdict::LaunchError;
                r.reason = "verified, then failed while timing: " + t.error().text();
            }
        }
        // One request, one evaluation: the module and the input sets kept for its timed runs
        // (gigabytes for a large problem) go now, not when the next evaluation runs short of memory.
        if (op == "evaluate")
            s.evaluator->release(v.key);
        return nlohmann::json{{"result", r}};
    }
    if (op == "time") {
        auto t =
            s.evaluator->time(req.at("key").get<std::string>(), req.value("trials", 100), req.value("checked", true));
        if (!t) {
            Error e = t.error();
            if (s.evaluator->contextLost())
                e.code = ErrorCode::Crashed; // the client records the candidate as crashed and restarts
            return e;
        }
        return nlohmann::json{{"timed", *t}};
    }
    if (op == "trial_data") {
        auto d = s.evaluator->trialData(req.at("seed").get<std::uint64_t>(), req.value("trials", 5));
        if (!d)
            return d.error();
        return nlohmann::json{{"trials", *d}};
    }
    if (op == "release") {
        s.evaluator->release(req.value("key", ""));
        return nlohmann::json::object();
    }
    return makeError(ErrorCode::UnknownOp, "unknown op '" + op + "'");
}

// Tensors of several GB are allocated and freed in turn (fp64 copies, references, poisoned
// outputs); the caching allocator's fixed segments fragment under that pattern until a problem
// that fits in memory fails to allocate. Expandable segments map what is needed instead. A
// setting of the user's own wins; both names are set because libtorch renamed the variable.
void preferExpandableSegments()
{
    if (std::getenv("PYTORCH_ALLOC_CONF") || std::getenv("PYTORCH_CUDA_ALLOC_CONF"))
        return;
    setenv("PYTORCH_ALLOC_CONF", "expandable_segments:True", 0);
    setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True", 0);
}

} // namespace

int runWorker(int argc, char **argv)
{
    preferExpandableSegments();
    State s;
    for (int i = 1; i < argc; ++i)
        if (std::string(argv[i]) == "--compile")
            s.compileOnly = true;
    Channel channel;
    s.gpu = gpu::queryGpu();
    if (!s.compileOnly && s.gpu.present && !shim::torchHasCuda()) {
        s.gpu.present = false;
        s.gpu.reason = "this worker's libtorch " + shim::torchVersion() + " was built without CUDA";
    }
    s.capacity = gpuCapacity(s);
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.empty())
            continue;
        nlohmann::json reply;
        nlohmann::json req;
        try {
            req = nlohmann::json::parse(line);
        } catch (const std::exception &e) {
            channel.send({{"id", nullptr},
                          {"ok", false},
                          {"error", errorJson(makeError(ErrorCode::Protocol, std::string("not JSON: ") + e.what()))}});
            continue;
        }
        reply["id"] = req.value("id", nlohmann::json());
        s.payload.reset();
        if (req.contains("module_bytes")) {
            // Raw bytes follow the line (a module's); a stream that ends inside them leaves
            // nothing to talk to.
            if (!req["module_bytes"].is_number_unsigned()) {
                reply["ok"] = false;
                reply["error"] = errorJson(makeError(ErrorCode::BadRequest, "module_bytes must be a byte count"));
                channel.send(reply);
                continue;
            }
            const auto size = req["module_bytes"].get<std::size_t>();
            std::string bytes(size, '\0');
            if (!std::cin.read(bytes.data(), std::streamsize(size))) {
                std::cerr << "kernelforge-worker: the request's " << size << " bytes ended early\n";
                return 2;
            }
            s.payload = std::move(bytes);
        }
        if (req.value("op", "") == "quit") {
            reply["ok"] = true;
            channel.send(reply);
            return 0;
        }
        try {
            auto r = handle(s, req);
            if (r) {
                reply.update(*r);
                reply["ok"] = true;
            } else {
                reply["ok"] = false;
                reply["error"] = errorJson(r.error());
            }
        } catch (const nlohmann::json::exception &e) {
            // A field missing from the request or of the wrong type.
            reply["ok"] = false;
            reply["error"] = errorJson(makeError(ErrorCode::BadRequest, e.what()));
        } catch (const std::exception &e) {
            reply["ok"] = false;
            reply["error"] = errorJson(makeError(ErrorCode::Worker, e.what()));
        }
        channel.send(reply);
        if (s.evaluator && s.evaluator->contextLost()) {
            // After a fault every CUDA call in this process fails; the client starts a new worker.
            std::cerr << "kernelforge-worker: the CUDA context is lost; exiting so a fresh worker can start\n";
            return 3;
        }
    }
    return 0;
}

} // namespace kf
