#include "evaluator.h"
#include "evaluator_parts.h"
#include "gpu/physical_floor.h"
#include "worker/compiler.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>

namespace kf::ref {

namespace {

// The problem's own inputs for the op graph and the eager baseline: no candidate ever sees them
// judged, so a fixed seed costs nothing there. Candidates get a seed of their own each time.
constexpr std::uint64_t kLoadSeed = 20250501;

std::uint64_t randomSeed()
{
    std::random_device rd;
    std::uint64_t s = (std::uint64_t(rd()) << 32) ^ rd();
    return s ? s : 1;
}

std::int64_t bytesOf(const std::vector<torch::Tensor> &ts)
{
    std::int64_t n = 0;
    for (const auto &t : ts)
        n += std::int64_t(t.nbytes());
    return n;
}

std::string gb(double bytes)
{
    std::ostringstream s;
    s.precision(3);
    s << bytes / 1e9 << " GB";
    return s.str();
}

// What a check keeps of an output's reference: fp32 for floating outputs (fp64 ones stay fp64),
// integers in the output's own type.
torch::Tensor keptReference(const torch::Tensor &ref64, const TensorSpec &out)
{
    if (out.dtype == DType::F64)
        return ref64;
    if (isFloating(out.dtype))
        return ref64.to(torch::kFloat32);
    return ref64.to(torchDtype(out.dtype));
}

} // namespace

std::string fmt(double v)
{
    std::ostringstream s;
    s.precision(3);
    s << v;
    return s.str();
}

bool isOutOfMemory(const std::string &what)
{
    return what.find("out of memory") != std::string::npos ||
        what.find("CUDA_ERROR_OUT_OF_MEMORY") != std::string::npos;
}

void MemoryBudget::notePeak()
{
    std::size_t free = 0, total = 0;
    if (cudaMemGetInfo(&free, &total) == cudaSuccess)
        peak = std::max<std::int64_t>(peak, std::int64_t(total - free));
}

Evaluator::~Evaluator() = default;

void Evaluator::release(const std::string &key) { m_prepared.erase(key); }

Result<std::unique_ptr<Evaluator>> Evaluator::load(const Problem &p, const GpuInfo &gpu, std::int64_t capacityBytes)
{
    std::unique_ptr<Evaluator> e(new Evaluator);
    e->m_problem = p;
    e->m_gpu = gpu;
    e->m_memory.capacity = capacityBytes;
    e->m_device = gpu.present ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
    auto r = Reference::compile(p);
    if (!r)
        return r.error();
    e->m_reference = std::move(*r);

    // Run the reference once to record the op graph with shapes and to check the declared outputs.
    // Without a GPU only small sizes are run; the large seed sizes would take minutes on a CPU.
    std::int64_t elements = 0;
    for (const auto &t : p.inputs)
        elements += t.numel();
    for (const auto &t : p.params)
        elements += t.numel();
    const bool run = gpu.present || elements <= (std::int64_t(1) << 24);
    LoadedProblem &L = e->m_loaded;
    L.bytes = p.bytes();
    const std::string where = p.path.empty() ? p.name : p.path;
    if (run) {
        try {
            TrialSpec t0 = trialPlan(p, 1, kLoadSeed).front();
            auto inputs = makeInputs(p, t0, e->m_device);
            auto params = e->paramsFor(t0);
            try {
                L.graph = e->m_reference->trace(inputs, params);
            } catch (const std::exception &) {
                // An op the node-by-node run cannot execute: keep the graph without shapes.
                L.graph = e->m_reference->structure();
            }
            auto outs = e->m_reference->run(inputs, params);
            if (outs.size() != p.outputs.size())
                return makeError(ErrorCode::Reference,
                                 "the reference returns " + std::to_string(outs.size()) +
                                     " tensors but the file declares " + std::to_string(p.outputs.size()),
                                 where + ": outputs");
            for (std::size_t i = 0; i < outs.size(); ++i) {
                const TensorSpec &d = p.outputs[i];
                if (outs[i].sizes().vec() != d.shape || outs[i].scalar_type() != torchDtype(d.dtype)) {
                    std::ostringstream s;
                    s << "the reference's output " << i << " is " << outs[i].sizes() << " " << outs[i].scalar_type()
                      << " but the file declares " << d.name << " as " << c10::IntArrayRef(d.shape) << " "
                      << toString(d.dtype);
                    return makeError(ErrorCode::Reference, s.str(), where + ": outputs");
                }
            }
        } catch (const std::exception &ex) {
            if (gpu.present && isOutOfMemory(ex.what()))
                return makeError(
                    ErrorCode::Engine,
                    std::string("out of GPU memory while running the reference once at load: ") + ex.what(), where);
            return makeError(ErrorCode::Reference, std::string("the reference failed to run: ") + ex.what(),
                             where + ": reference.source");
        }
    } else {
        L.graph = e->m_reference->structure();
    }
    L.outputs = p.outputs;
    double graphFlops = 0;
    for (const auto &n : L.graph)
        graphFlops += n.flops;
    if (p.flops) {
        L.flops = *p.flops;
        L.flopsSource = "declared";
    } else {
        L.flops = graphFlops;
        L.flopsSource = run ? "graph" : "unknown (graph not run without a GPU)";
    }
    if (gpu.present) {
        auto checks = CheckKernels::load(gpu.arch.empty() ? std::string("sm_90a") : gpu.arch);
        if (!checks)
            return checks.error();
        e->m_checks = std::move(*checks);
        // Twice the L2, so that nothing a timed run reads is still cached from the run before.
        const std::int64_t bytes = std::max<std::int64_t>(2 * gpu.l2Bytes, 64ll << 20);
        e->m_flush = torch::empty({bytes}, torch::TensorOptions().dtype(torch::kUInt8).device(e->m_device));
        e->m_launchMs = e->measureLaunchMs();
        e->m_memory.notePeak();
    }
    return e;
}

Result<Timing> Evaluator::baseline(int trials)
{
    if (!m_gpu.present)
        return makeError(ErrorCode::NoGpu, "timing needs an NVIDIA GPU: " + m_gpu.reason);
    TrialSpec t0 = trialPlan(m_problem, 1, kLoadSeed).front();
    auto inputs = makeInputs(m_problem, t0, m_device);
    auto params = paramsFor(t0);
    return timeLoop(
        [&]() -> Status {
            try {
                m_reference->run(inputs, params);
            } catch (const std::exception &e) {
                return makeError(ErrorCode::Reference, e.what());
            }
            return Ok{};
        },
        trials);
}

void Evaluator::poisonScratch(Prepared &p)
{
    // An uninitialized buffer holds all-ones bytes (NaN, -1) before every run, verified or timed,
    // so a kernel that reads what it never wrote fails, and none can keep state in it.
    for (const ResolvedScratch &s : p.plan.scratch)
        if (!s.zeroed) {
            torch::Tensor &t = p.scratch.at(s.name);
            cudaMemsetAsync(t.data_ptr(), 0xff, std::size_t(t.nbytes()), nullptr);
        }
}

Status Evaluator::poisonOutputs(const std::vector<torch::Tensor> &outputs)
{
    for (std::size_t i = 0; i < outputs.size(); ++i)
        if (Status s = m_checks->poison(outputs[i].data_ptr(), outputs[i].numel(), m_problem.outputs[i].dtype); !s)
            return s;
    return Ok{};
}

Status Evaluator::launchPlan(Prepared &p, const std::vector<torch::Tensor> &inputs,
                             const std::vector<torch::Tensor> &params, const std::vector<torch::Tensor> &outputs)
{
    std::map<std::string, void *> ptr;
    for (std::size_t i = 0; i < inputs.size(); ++i)
        ptr[m_problem.inputs[i].name] = inputs[i].data_ptr();
    for (std::size_t i = 0; i < params.size(); ++i)
        ptr[m_problem.params[i].name] = params[i].data_ptr();
    for (std::size_t i = 0; i < outputs.size(); ++i)
        ptr[m_problem.outputs[i].name] = outputs[i].data_ptr();
    for (const ResolvedScratch &s : p.plan.scratch) {
        torch::Tensor &t = p.scratch.at(s.name);
        ptr[s.name] = t.data_ptr();
        // The zero fill is part of the launch sequence (the exported launcher does it too), so a
        // timed run pays for it.
        if (s.zeroed)
            cudaMemsetAsync(t.data_ptr(), 0, std::size_t(t.nbytes()), nullptr);
    }
    for (const ResolvedLaunch &l : p.plan.launches) {
        const gpu::KernelHandle *k = p.module->kernel(l.kernel);
        if (!k)
            return makeError(ErrorCode::Launch, "kernel '" + l.kernel + "' is not in the compiled module");
        std::vector<gpu::LaunchValue> args;
        for (const ResolvedArg &a : l.args) {
            gpu::LaunchValue v;
            auto put = [&](const auto &x) {
                v.bytes.resize(sizeof x);
                std::memcpy(v.bytes.data(), &x, sizeof x);
            };
            switch (a.kind) {
            case LaunchArg::Kind::Tensor:
            case LaunchArg::Kind::Scratch:
                put(ptr.at(a.name));
                break;
            case LaunchArg::Kind::Int32:
                put(std::int32_t(a.ivalue));
                break;
            case LaunchArg::Kind::Int64:
                put(std::int64_t(a.ivalue));
                break;
            case LaunchArg::Kind::Float32:
                put(float(a.fvalue));
                break;
            }
            args.push_back(std::move(v));
        }
        if (Status s = gpu::launch(*k, l, args, nullptr); !s) {
            if (s.error().code == ErrorCode::Fatal)
                m_contextLost = true;
            return s;
        }
    }
    return Ok{};
}

std::vector<torch::Tensor> Evaluator::paramsFor(const TrialSpec &t)
{
    const auto &own = m_reference->moduleParams();
    if (t.randomParams || own.empty())
        return makeParams(m_problem, t, m_device);
    std::vector<torch::Tensor> out;
    for (std::size_t i = 0; i < own.size(); ++i)
        out.push_back(own[i].to(m_device, torchDtype(m_problem.params[i].dtype)).contiguous().clone());
    return out;
}

Result<std::vector<std::uint64_t>> Evaluator::hashTensors(const TrialData &d, std::uint64_t salt)
{
    const std::size_t n = d.inputs.size() + d.params.size();
    auto acc = torch::zeros({std::int64_t(std::max<std::size_t>(n, 1))},
                            torch::TensorOptions().dtype(torch::kInt64).device(m_device));
    auto *accPtr = static_cast<std::uint64_t *>(acc.data_ptr());
    std::size_t k = 0;
    for (const auto *group : {&d.inputs, &d.params})
        for (const torch::Tensor &t : *group) {
            if (Status s = m_checks->hash(t.data_ptr(), std::int64_t(t.nbytes()), salt, accPtr + k++); !s)
                return s.error();
        }
    std::vector<std::uint64_t> host(n);
    if (n && cudaMemcpy(host.data(), accPtr, n * 8, cudaMemcpyDeviceToHost) != cudaSuccess)
        return makeError(ErrorCode::Engine, "reading the input hashes back failed");
    return host;
}

Result<std::string> Evaluator::changedInput(const TrialData &d, std::uint64_t salt)
{
    auto now = hashTensors(d, salt);
    if (!now)
        return now.error();
    for (std::size_t i = 0; i < now->size(); ++i)
        if ((*now)[i] != d.inputHashes[i])
            return i < d.inputs.size() ? m_problem.inputs[i].name : m_problem.params[i - d.inputs.size()].name;
    return std::string();
}

Result<std::vector<double>> Evaluator::rmsOf(const std::vector<torch::Tensor> &refs64)
{
    std::vector<double> rms(refs64.size(), 0.0);
    auto acc = torch::zeros({std::int64_t(std::max<std::size_t>(refs64.size(), 1))},
                            torch::TensorOptions().dtype(torch::kFloat64).device(m_device));
    for (std::size_t i = 0; i < refs64.size(); ++i)
        if (refs64[i].scalar_type() == torch::kFloat64)
            if (Status s = m_checks->sumSquares(static_cast<const double *>(refs64[i].data_ptr()), refs64[i].numel(),
                                                static_cast<double *>(acc.data_ptr()) + i);
                !s)
                return s.error();
    std::vector<double> sums(refs64.size());
    if (!sums.empty() &&
        cudaMemcpy(sums.data(), acc.data_ptr(), sums.size() * 8, cudaMemcpyDeviceToHost) != cudaSuccess)
        return makeError(ErrorCode::Engine, "reading the reference's sum of squares back failed");
    for (std::size_t i = 0; i < refs64.size(); ++i)
        rms[i] = refs64[i].numel() ? std::sqrt(sums[i] / double(refs64[i].numel())) : 0.0;
    return rms;
}

Result<std::vector<CompareStats>> Evaluator::compareOutputs(const std::vector<torch::Tensor> &outs, const TrialData &d,
                                                            const std::vector<torch::Tensor> *eager,
                                                            std::uint64_t *slots, bool readBack)
{
    for (std::size_t i = 0; i < outs.size(); ++i) {
        const TensorSpec &spec = m_problem.outputs[i];
        CompareArgs a;
        a.out = outs[i].data_ptr();
        a.outType = spec.dtype;
        a.ref = d.refs[i].data_ptr();
        a.refIsF64 = d.refs[i].scalar_type() == torch::kFloat64;
        a.numel = outs[i].numel();
        a.rms = d.rms[i];
        a.slack = isFloating(spec.dtype) && !a.refIsF64 ? kFp32RefSlack : 0.0;
        torch::Tensor e;
        if (eager) {
            e = (*eager)[i].scalar_type() == outs[i].scalar_type() ? (*eager)[i]
                                                                   : (*eager)[i].to(outs[i].scalar_type());
            a.eager = e.data_ptr();
        }
        if (Status s = m_checks->compare(a, slots + i * kStatsWords); !s)
            return s.error();
    }
    std::vector<CompareStats> stats;
    if (!readBack)
        return stats;
    std::vector<std::uint64_t> host(outs.size() * kStatsWords);
    if (cudaError_t e = cudaMemcpy(host.data(), slots, host.size() * 8, cudaMemcpyDeviceToHost); e != cudaSuccess)
        return makeError(gpu::isSticky(e) ? ErrorCode::Fatal : ErrorCode::Engine,
                         "reading the comparison back: " + gpu::errorText(e));
    for (std::size_t i = 0; i < outs.size(); ++i)
        stats.push_back(CheckKernels::read(host.data() + i * kStatsWords));
    return stats;
}

namespace {

EvalResult fail(EvalResult r, Verdict v, const std::string &reason)
{
    r.verdict = v;
    r.reason = reason;
    return r;
}

} // namespace

Result<EvalResult> Evaluator::verify(const VerifyRequest &req)
{
    EvalResult r;
    r.policy = req.policy;
    m_prepared.erase(req.key);
    auto parsed = parseCandidate(req.source);
    if (!parsed)
        return fail(r, Verdict::CompileError, parsed.error().text());
    r.precision = parsed->precision;
    if (Status s = checkCandidate(*parsed, m_problem); !s)
        return fail(r, Verdict::LaunchError, s.error().text());
    auto plan = resolveCandidate(*parsed, m_problem);
    if (!plan)
        return fail(r, Verdict::LaunchError, plan.error().text());
    if (!m_gpu.present)
        return fail(r, Verdict::NeedsGpu, "evaluation needs an NVIDIA GPU: " + m_gpu.reason);

    auto prep = std::make_unique<Prepared>();
    prep->candidate = *parsed;
    prep->plan = *plan;
    prep->cubin = req.cubin;
    prep->names = req.loweredNames;
    if (prep->cubin.empty()) {
        const std::vector<std::string> kernels = kernelNames(*parsed);
        CompileOptions o;
        o.arch = m_gpu.arch;
        o.cacheDir = defaultCompileCacheDir();
        auto c = compileCuda(req.source, kernels, o);
        if (!c)
            return fail(r, Verdict::CompileError, c.error().text());
        r.compileLog = c->log;
        r.compileSeconds = c->seconds;
        if (!c->ok)
            return fail(r, Verdict::CompileError,
                        c->diagnostics.empty() ? "compile failed" : c->diagnostics.front().message);
        prep->cubin = c->cubin;
        prep->names = c->loweredNames;
    }
    for (const auto &l : parsed->launches)
        if (!prep->names.count(l.kernel))
            prep->names[l.kernel] = l.kernel;
    auto module = gpu::Module::load(prep->cubin, prep->names);
    if (!module) {
        m_contextLost = module.error().code == ErrorCode::Fatal;
        return fail(r, m_contextLost ? Verdict::Crashed : Verdict::LaunchError, module.error().text());
    }
    prep->module = std::move(*module);
    for (const auto &[name, h] : prep->module->kernels())
        r.resources[name] = h.resources;

    std::int64_t scratchBytes = 0;
    for (const ResolvedScratch &s : prep->plan.scratch)
        scratchBytes += s.count * std::int64_t(torch::elementSize(torchDtype(s.dtype)));
    if (m_memory.capacity > 0 && scratchBytes > m_memory.capacity / 2)
        return fail(r, Verdict::LaunchError,
                    "the kernel's scratch buffers take " + gb(double(scratchBytes)) + ", more than half of the " +
                        gb(double(m_memory.capacity)) + " this worker may use on the GPU");

    prep->seed = req.seed.value_or(randomSeed());
    prep->salt = randomSeed();
    r.seed = prep->seed;
    try {
        for (const ResolvedScratch &s : prep->plan.scratch)
            prep->scratch[s.name] =
                torch::zeros({s.count}, torch::TensorOptions().dtype(torchDtype(s.dtype)).device(m_device));
        auto judged = runTrials(*prep, req, r);
        m_memory.notePeak();
        if (judged)
            judged->peakGpuBytes = m_memory.peak;
        if (!judged || judged->verdict != Verdict::Correct)
            return judged;
        prep->result = *judged;
        m_prepared[req.key] = std::move(prep);
        return judged;
    } catch (const std::exception &e) {
        const cudaError_t le = cudaGetLastError();
        m_contextLost = m_contextLost || gpu::isSticky(le);
        if (m_contextLost)
            return fail(r, Verdict::Crashed, std::string("the kernel left the GPU unusable: ") + e.what());
        // libtorch or the engine's own kernels failed, not the candidate: no verdict on it.
        return makeError(ErrorCode::Engine,
                         std::string(isOutOfMemory(e.what()) ? "out of GPU memory while verifying: "
                                                             : "verification failed in the engine: ") +
                             e.what());
    }
}

Result<Evaluator::TrialData> Evaluator::drawTrial(const TrialSpec &t, double tolerance, std::uint64_t salt,
                                                  std::vector<torch::Tensor> &eager)
{
    TrialData d;
    d.spec = t;
    d.tolerance = tolerance;
    d.inputs = makeInputs(m_problem, t, m_device);
    d.params = paramsFor(t);
    {
        // The upcast copies live only while the fp64 reference is computed.
        std::vector<torch::Tensor> in64, par64;
        for (auto &x : d.inputs)
            in64.push_back(x.is_floating_point() ? x.to(torch::kFloat64) : x);
        for (auto &x : d.params)
            par64.push_back(x.is_floating_point() ? x.to(torch::kFloat64) : x);
        d.refs = m_reference->run(in64, par64);
        m_memory.notePeak();
    }
    // What the comparison kernels read: dense tensors, fp64 for floating outputs (a reference that
    // casts inside may return fp32), integers in the output's own type.
    for (std::size_t i = 0; i < d.refs.size() && i < m_problem.outputs.size(); ++i) {
        const DType want = m_problem.outputs[i].dtype;
        d.refs[i] = d.refs[i].to(isFloating(want) ? torch::kFloat64 : torchDtype(want)).contiguous();
    }
    auto rms = rmsOf(d.refs);
    if (!rms)
        return rms.error();
    d.rms = *rms;
    eager = m_reference->run(d.inputs, d.params);
    for (auto &e : eager)
        e = e.contiguous();
    auto hashes = hashTensors(d, salt);
    if (!hashes)
        return hashes.error();
    d.inputHashes = *hashes;
    return d;
}

std::optional<EvalResult> Evaluator::launchAndWait(Prepared &prep, const TrialData &d,
                                                   const std::vector<torch::Tensor> &into, const EvalResult &r)
{
    if (Status s = poisonOutputs(into); !s)
        return fail(r, Verdict::Crashed, s.error().text());
    poisonScratch(prep);
    Status s = launchPlan(prep, d.inputs, d.params, into);
    cudaError_t se = cudaDeviceSynchronize();
    if (se != cudaSuccess && gpu::isSticky(se))
        m_contextLost = true;
    if (m_contextLost)
        return fail(r, Verdict::Crashed, s ? "the kernel faulted: " + gpu::errorText(se) : s.error().text());
    if (!s)
        return fail(r, Verdict::LaunchError, s.error().text());
    if (se != cudaSuccess)
        return fail(r, Verdict::Crashed, "the kernel failed: " + gpu::errorText(se));
    return std::nullopt;
}

void Evaluator::judgeTrial(const std::vector<CompareStats> &stats, TrialResult &tr) const
{
    tr.passed = true;
    tr.kernelbenchPassed = true;
    for (std::size_t i = 0; i < stats.size(); ++i) {
        const CompareStats &c = stats[i];
        tr.maxScaledError = std::max(tr.maxScaledError, c.maxScaled);
        tr.maxAbsError = std::max(tr.maxAbsError, c.maxAbs);
        tr.nonFinite += c.nonFinite;
        tr.unwritten += c.mismatched;
        // KernelBench's own check (allclose against the eager output at 1e-2), for comparison with
        // published results; one number says whether and by how much it missed.
        tr.kernelbenchRatio = std::max(tr.kernelbenchRatio, c.kernelbenchRatio);
        tr.kernelbenchPassed = tr.kernelbenchPassed && c.kernelbenchRatio <= 1;
        if (c.nonFinite || c.mismatched || !(c.maxScaled <= tr.tolerance)) {
            tr.passed = false;
            std::ostringstream s;
            s << "output '" << m_problem.outputs[i].name << "' on trial " << tr.index << " (" << tr.distribution
              << "): ";
            if (c.nonFinite)
                s << c.nonFinite << " elements not written or not finite";
            else if (c.mismatched)
                s << c.mismatched << " elements differ";
            else
                s << "max scaled error " << fmt(c.maxScaled) << " > tolerance " << fmt(tr.tolerance)
                  << " (max abs error " << fmt(c.maxAbs) << ")";
            tr.note = s.str();
        }
    }
}

// The first trial's inputs once more: two results that differ beyond the tolerance mean a race.
Result<std::optional<EvalResult>> Evaluator::raceCheck(Prepared &prep, const TrialData &d,
                                                       const std::vector<torch::Tensor> &first, double tol,
                                                       std::uint64_t *slot, const EvalResult &r)
{
    TrialData asRef;
    asRef.rms = d.rms;
    for (std::size_t i = 0; i < first.size(); ++i)
        asRef.refs.push_back(keptReference(first[i], m_problem.outputs[i]));
    std::vector<torch::Tensor> again;
    for (const auto &o : first)
        again.push_back(torch::empty_like(o));
    if (auto failed = launchAndWait(prep, d, again, r))
        return std::optional<EvalResult>(
            fail(*failed, failed->verdict, failed->reason + " (on a second run of trial 0)"));
    cudaMemsetAsync(slot, 0, first.size() * kStatsWords * 8, nullptr);
    auto rerun = compareOutputs(again, asRef, nullptr, slot, true);
    if (!rerun)
        return rerun.error();
    for (std::size_t i = 0; i < first.size(); ++i) {
        const CompareStats &c = (*rerun)[i];
        if (c.nonFinite || c.mismatched || !(c.maxScaled <= tol))
            return std::optional<EvalResult>(fail(r, Verdict::Racy,
                                                  "two runs on the same inputs differ: max scaled difference " +
                                                      fmt(c.maxScaled) + " on output '" + m_problem.outputs[i].name +
                                                      "'"));
    }
    return std::optional<EvalResult>();
}

// Kept for the timed runs while the memory plan allows, and always at least two sets, so that
// timed runs never see one input set only.
void Evaluator::keepForTiming(Prepared &prep, TrialData &d, std::int64_t &keptBytes)
{
    std::int64_t refBytes = 0;
    for (const auto &o : m_problem.outputs)
        refBytes += o.numel() *
            std::int64_t(isFloating(o.dtype) && o.dtype != DType::F64 ? 4 : torch::elementSize(torchDtype(o.dtype)));
    const std::int64_t setBytes = bytesOf(d.inputs) + bytesOf(d.params) + refBytes;
    const std::int64_t working = m_memory.peak - keptBytes; // what one trial needed on top of the kept sets
    const bool fits = m_memory.capacity <= 0 || keptBytes + setBytes + working <= m_memory.capacity;
    if (prep.sets.size() >= 2 && !fits)
        return;
    for (std::size_t i = 0; i < d.refs.size(); ++i)
        d.refs[i] = keptReference(d.refs[i], m_problem.outputs[i]);
    keptBytes += setBytes;
    prep.sets.push_back(std::move(d));
}

Result<EvalResult> Evaluator::runTrials(Prepared &prep, const VerifyRequest &req, EvalResult r)
{
    const double strictTol = tolerance(req.policy);
    const std::size_t nOut = m_problem.outputs.size();
    // One slot of comparison words per output, reused by every comparison of this evaluation.
    auto slots =
        torch::zeros({std::int64_t(nOut * kStatsWords)}, torch::TensorOptions().dtype(torch::kInt64).device(m_device));
    auto *slot = static_cast<std::uint64_t *>(slots.data_ptr());
    std::int64_t keptBytes = 0;

    for (const TrialSpec &t : trialPlan(m_problem, std::max(req.trials, 1), prep.seed)) {
        TrialResult tr;
        tr.index = t.index;
        tr.seed = t.seed;
        tr.distribution = t.distribution;
        tr.randomParams = t.randomParams;
        tr.tolerance = t.loose ? tolerance(Policy::Loose) : strictTol;
        std::vector<torch::Tensor> eager;
        auto d = drawTrial(t, tr.tolerance, prep.salt, eager);
        if (!d)
            return d.error();
        std::vector<torch::Tensor> outs;
        for (const auto &o : m_problem.outputs)
            outs.push_back(torch::empty(o.shape, torch::TensorOptions().dtype(torchDtype(o.dtype)).device(m_device)));
        m_memory.notePeak();
        if (auto failed = launchAndWait(prep, *d, outs, r))
            return *failed;

        // A kernel may not write its inputs or parameters.
        auto changed = changedInput(*d, prep.salt);
        if (!changed)
            return changed.error();
        if (!changed->empty()) {
            tr.note = "the kernel wrote its input '" + *changed + "'";
            r.trials.push_back(tr);
            return fail(r, Verdict::Wrong, tr.note + " (trial " + std::to_string(t.index) + ")");
        }
        cudaMemsetAsync(slot, 0, nOut * kStatsWords * 8, nullptr);
        auto stats = compareOutputs(outs, *d, &eager, slot, true);
        if (!stats)
            return stats.error();
        judgeTrial(*stats, tr);
        r.maxScaledError = std::max(r.maxScaledError, tr.maxScaledError);
        r.trials.push_back(tr);
        if (!tr.passed)
            return fail(r, Verdict::Wrong, tr.note);
        eager.clear();
        // Skipped on request: under compute-sanitizer one launch sequence shows what the tool can
        // see, and each one there runs ten to a hundred times slower.
        if (t.index == 0 && req.raceRerun) {
            auto racy = raceCheck(prep, *d, outs, strictTol, slot, r);
            if (!racy)
                return racy.error();
            if (*racy)
                return **racy;
        }
        outs.clear();
        keepForTiming(prep, *d, keptBytes);
    }
    r.kernelbenchPassed =
        std::all_of(r.trials.begin(), r.trials.end(), [](const TrialResult &t) { return t.kernelbenchPassed; });
    r.verdict = Verdict::Correct;
    r.floorMs = floorMs(m_loaded.flops, m_loaded.bytes, r.precision, m_ceilings);
    return r;
}

Result<nlohmann::json> Evaluator::trialData(std::uint64_t seed, int trials)
{
    constexpr std::int64_t kLimit = std::int64_t(1) << 20; // numbers in the reply, all trials together
    std::int64_t numbers = 0;
    for (const auto &t : m_problem.inputs)
        numbers += t.numel();
    for (const auto &t : m_problem.params)
        numbers += t.numel();
    for (const auto &t : m_problem.outputs)
        numbers += t.numel();
    if (numbers * std::max(trials, 1) > kLimit)
        return makeError(ErrorCode::Usage,
                         "trial data is for small problems (a variant): this one has " + std::to_string(numbers) +
                             " numbers a trial");
    auto flat = [](const torch::Tensor &t) {
        auto c = t.to(torch::kCPU, torch::kFloat64).contiguous();
        return std::vector<double>(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
    };
    nlohmann::json out = nlohmann::json::array();
    for (const TrialSpec &t : trialPlan(m_problem, std::max(trials, 1), seed)) {
        auto inputs = makeInputs(m_problem, t, m_device);
        auto params = paramsFor(t);
        std::vector<torch::Tensor> in64, par64;
        for (auto &x : inputs)
            in64.push_back(x.is_floating_point() ? x.to(torch::kFloat64) : x);
        for (auto &x : params)
            par64.push_back(x.is_floating_point() ? x.to(torch::kFloat64) : x);
        nlohmann::json trial{{"index", t.index}, {"seed", t.seed}, {"distribution", t.distribution}};
        for (std::size_t i = 0; i < inputs.size(); ++i)
            trial["inputs"][m_problem.inputs[i].name] = flat(inputs[i]);
        for (std::size_t i = 0; i < params.size(); ++i)
            trial["params"][m_problem.params[i].name] = flat(params[i]);
        auto refs = m_reference->run(in64, par64);
        for (std::size_t i = 0; i < refs.size(); ++i)
            trial["outputs"][m_problem.outputs[i].name] = flat(refs[i]);
        out.push_back(std::move(trial));
    }
    return out;
}
} // namespace kf::ref
