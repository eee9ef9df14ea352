#include "evaluator.h"
#include "kernel/compiler.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

namespace kf::ref {

struct Evaluator::Prepared {
    Candidate candidate;
    ResolvedPlan plan;
    std::unique_ptr<gpu::Module> module;
    std::map<std::string, torch::Tensor> scratch;
    // The first trial's data, kept for the racy re-run and for timing.
    std::vector<torch::Tensor> inputs, params, outputs;
    EvalResult result;
};

namespace {

constexpr std::uint64_t kBaseSeed = 20250501;

std::string fmt(double v)
{
    std::ostringstream s;
    s.precision(3);
    s << v;
    return s.str();
}

struct Comparison {
    double maxScaled = 0, maxAbs = 0;
    std::int64_t nonFinite = 0, mismatched = 0;
};

// The design's scale-aware rule: |out - ref| <= tol * (|ref| + rms(ref)), elementwise, in fp64.
Comparison compare(const torch::Tensor &out, const torch::Tensor &ref)
{
    Comparison c;
    if (!out.is_floating_point()) {
        c.mismatched = out.ne(ref.to(out.scalar_type())).sum().item<std::int64_t>();
        c.maxScaled = c.mismatched ? std::numeric_limits<double>::infinity() : 0;
        return c;
    }
    auto o = out.to(torch::kFloat64);
    auto r = ref.to(torch::kFloat64);
    auto refFinite = torch::isfinite(r);
    auto outFinite = torch::isfinite(o);
    c.nonFinite = (refFinite & outFinite.logical_not()).sum().item<std::int64_t>();
    auto both = refFinite & outFinite;
    auto rz = torch::where(refFinite, r, torch::zeros_like(r));
    const double rms = std::sqrt(rz.pow(2).mean().item<double>());
    auto diff = torch::where(both, (o - r).abs(), torch::zeros_like(r));
    c.maxAbs = diff.max().item<double>();
    auto scaled = diff / (rz.abs() + rms + std::numeric_limits<double>::min());
    c.maxScaled = scaled.max().item<double>();
    return c;
}

const TensorSpec *findTensor(const Problem &p, const std::string &name) { return p.tensor(name); }

} // namespace

Evaluator::~Evaluator() = default;

void Evaluator::release(const std::string &key) { m_prepared.erase(key); }

Result<std::unique_ptr<Evaluator>> Evaluator::load(const Problem &p, const GpuInfo &gpu)
{
    std::unique_ptr<Evaluator> e(new Evaluator);
    e->m_problem = p;
    e->m_gpu = gpu;
    e->m_device = gpu.present ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
    auto r = Reference::compile(p);
    if (!r)
        return r.error();
    e->m_reference = std::move(*r);

    // Run the reference once to record the op graph with shapes and to check the declared outputs.
    // Without a GPU only small sizes are run; the large seed sizes would take minutes on a CPU.
    std::int64_t elements = 0;
    for (const auto &t : p.inputs) elements += t.numel();
    for (const auto &t : p.params) elements += t.numel();
    const bool run = gpu.present || elements <= (std::int64_t(1) << 24);
    LoadedProblem &L = e->m_loaded;
    L.bytes = p.bytes();
    if (run) {
        try {
            TrialSpec t0 = trialPlan(p, 1, kBaseSeed).front();
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
                return makeError("reference", "the reference returns " + std::to_string(outs.size()) +
                                                  " tensors but the file declares " + std::to_string(p.outputs.size()),
                                 (p.path.empty() ? p.name : p.path) + ": outputs");
            for (std::size_t i = 0; i < outs.size(); ++i) {
                const TensorSpec &d = p.outputs[i];
                if (outs[i].sizes().vec() != d.shape || outs[i].scalar_type() != torchDtype(d.dtype)) {
                    std::ostringstream s;
                    s << "the reference's output " << i << " is " << outs[i].sizes() << " "
                      << outs[i].scalar_type() << " but the file declares " << d.name << " as "
                      << c10::IntArrayRef(d.shape) << " " << toString(d.dtype);
                    return makeError("reference", s.str(), (p.path.empty() ? p.name : p.path) + ": outputs");
                }
            }
        } catch (const std::exception &ex) {
            return makeError("reference", std::string("the reference failed to run: ") + ex.what(),
                             (p.path.empty() ? p.name : p.path) + ": reference.source");
        }
    } else {
        L.graph = e->m_reference->structure();
    }
    L.outputs = p.outputs;
    double graphFlops = 0;
    for (const auto &n : L.graph) graphFlops += n.flops;
    if (p.flops) {
        L.flops = *p.flops;
        L.flopsSource = "declared";
    } else {
        L.flops = graphFlops;
        L.flopsSource = run ? "graph" : "unknown (graph not run without a GPU)";
    }
    if (gpu.present) {
        // Twice the L2, so that nothing a timed run reads is still cached from the run before.
        const std::int64_t bytes = std::max<std::int64_t>(2 * gpu.l2Bytes, 64ll << 20);
        e->m_flush = torch::empty({bytes}, torch::TensorOptions().dtype(torch::kUInt8).device(e->m_device));
    }
    return e;
}

Result<Timing> Evaluator::timeLoop(const std::function<Status()> &body, int trials)
{
    trials = std::max(trials, 1);
    for (int i = 0; i < 3; ++i) { // warm-up: module load, allocator, caches of the driver
        if (Status s = body(); !s)
            return s.error();
    }
    if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess) {
        m_contextLost = gpu::isSticky(e);
        return makeError(m_contextLost ? "fatal" : "launch", "warm-up failed: " + gpu::errorText(e));
    }
    std::vector<cudaEvent_t> ev(2 * std::size_t(trials));
    for (auto &x : ev) cudaEventCreate(&x);
    Status failed = Ok{};
    for (int i = 0; i < trials && failed; ++i) {
        cudaMemsetAsync(m_flush.data_ptr(), i & 0xff, std::size_t(m_flush.numel()), nullptr);
        cudaEventRecord(ev[2 * i], nullptr); // the legacy default stream, where libtorch works too
        failed = body();
        cudaEventRecord(ev[2 * i + 1], nullptr);
    }
    const cudaError_t se = cudaDeviceSynchronize();
    std::vector<double> ms;
    for (int i = 0; i < trials && failed && se == cudaSuccess; ++i) {
        float t = 0;
        cudaEventElapsedTime(&t, ev[2 * i], ev[2 * i + 1]);
        ms.push_back(t);
    }
    for (auto &x : ev) cudaEventDestroy(x);
    if (!failed)
        return failed.error();
    if (se != cudaSuccess) {
        m_contextLost = gpu::isSticky(se);
        return makeError(m_contextLost ? "fatal" : "launch", "timed run failed: " + gpu::errorText(se));
    }
    std::sort(ms.begin(), ms.end());
    auto at = [&](double q) { return ms[std::min(ms.size() - 1, std::size_t(q * double(ms.size() - 1) + 0.5))]; };
    Timing t;
    t.trials = int(ms.size());
    t.medianMs = ms.size() % 2 ? ms[ms.size() / 2] : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
    t.minMs = ms.front();
    t.maxMs = ms.back();
    t.p10Ms = at(0.1);
    t.p90Ms = at(0.9);
    double sum = 0;
    for (double v : ms) sum += v;
    t.meanMs = sum / double(ms.size());
    return t;
}

Result<Timing> Evaluator::baseline(int trials)
{
    if (!m_gpu.present)
        return makeError("no-gpu", "timing needs an NVIDIA GPU: " + m_gpu.reason);
    TrialSpec t0 = trialPlan(m_problem, 1, kBaseSeed).front();
    auto inputs = makeInputs(m_problem, t0, m_device);
    auto params = paramsFor(t0);
    return timeLoop(
        [&]() -> Status {
            try {
                m_reference->run(inputs, params);
            } catch (const std::exception &e) {
                return makeError("reference", e.what());
            }
            return Ok{};
        },
        trials);
}

Status Evaluator::runPlan(Prepared &p, const std::vector<torch::Tensor> &inputs, const std::vector<torch::Tensor> &params,
                          const std::vector<torch::Tensor> &outputs, PlanUse use)
{
    std::map<std::string, void *> ptr;
    for (std::size_t i = 0; i < inputs.size(); ++i) ptr[m_problem.inputs[i].name] = inputs[i].data_ptr();
    for (std::size_t i = 0; i < params.size(); ++i) ptr[m_problem.params[i].name] = params[i].data_ptr();
    for (std::size_t i = 0; i < outputs.size(); ++i) ptr[m_problem.outputs[i].name] = outputs[i].data_ptr();
    for (const ResolvedScratch &s : p.plan.scratch) {
        torch::Tensor &t = p.scratch.at(s.name);
        ptr[s.name] = t.data_ptr();
        // An uninitialized buffer holds all-ones bytes (NaN, -1) while verifying, so a kernel that
        // reads what it never wrote fails; timed runs leave it as the last run left it.
        if (s.zeroed)
            cudaMemsetAsync(t.data_ptr(), 0, std::size_t(t.nbytes()), nullptr);
        else if (use == PlanUse::Verify)
            cudaMemsetAsync(t.data_ptr(), 0xff, std::size_t(t.nbytes()), nullptr);
    }
    for (const ResolvedLaunch &l : p.plan.launches) {
        const gpu::KernelHandle *k = p.module->kernel(l.kernel);
        if (!k)
            return makeError("launch", "kernel '" + l.kernel + "' is not in the compiled module");
        std::vector<gpu::LaunchValue> args;
        for (const ResolvedArg &a : l.args) {
            gpu::LaunchValue v;
            auto put = [&](const auto &x) {
                v.bytes.resize(sizeof x);
                std::memcpy(v.bytes.data(), &x, sizeof x);
            };
            switch (a.kind) {
            case LaunchArg::Kind::Tensor:
            case LaunchArg::Kind::Scratch: put(ptr.at(a.name)); break;
            case LaunchArg::Kind::Int32: put(std::int32_t(a.ivalue)); break;
            case LaunchArg::Kind::Int64: put(std::int64_t(a.ivalue)); break;
            case LaunchArg::Kind::Float32: put(float(a.fvalue)); break;
            }
            args.push_back(std::move(v));
        }
        if (Status s = gpu::launch(*k, l, args, nullptr); !s) {
            if (s.error().code == "fatal")
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
        out.push_back(own[i].to(m_device, torchDtype(m_problem.params[i].dtype)).clone());
    return out;
}

EvalResult Evaluator::fail(EvalResult r, Verdict v, const std::string &reason)
{
    r.verdict = v;
    r.reason = reason;
    return r;
}

EvalResult Evaluator::verify(const VerifyRequest &req)
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
    std::string cubin = req.cubin;
    std::map<std::string, std::string> names = req.loweredNames;
    if (cubin.empty()) {
        std::vector<std::string> kernels;
        for (const auto &l : parsed->launches) kernels.push_back(l.kernel);
        CompileOptions o;
        o.arch = m_gpu.arch;
        o.cacheDir = defaultCompileCacheDir();
        auto c = compileCuda(req.source, kernels, o);
        if (!c)
            return fail(r, Verdict::CompileError, c.error().text());
        r.compileLog = c->log;
        r.compileSeconds = c->seconds;
        if (!c->ok)
            return fail(r, Verdict::CompileError, c->diagnostics.empty() ? "compile failed" : c->diagnostics.front().message);
        cubin = c->cubin;
        names = c->loweredNames;
    }
    for (const auto &l : parsed->launches)
        if (!names.count(l.kernel))
            names[l.kernel] = l.kernel;
    auto module = gpu::Module::load(cubin, names);
    if (!module) {
        m_contextLost = module.error().code == "fatal";
        return fail(r, m_contextLost ? Verdict::Crashed : Verdict::LaunchError, module.error().text());
    }
    prep->module = std::move(*module);
    for (const auto &[name, h] : prep->module->kernels()) r.resources[name] = h.resources;
    for (const ResolvedScratch &s : prep->plan.scratch)
        prep->scratch[s.name] = torch::zeros({s.count}, torch::TensorOptions().dtype(torchDtype(s.dtype)).device(m_device));

    const double strictTol = tolerance(req.policy);
    std::vector<torch::Tensor> firstOut;
    try {
        for (const TrialSpec &t : trialPlan(m_problem, std::max(req.trials, 1), kBaseSeed)) {
            TrialResult tr;
            tr.index = t.index;
            tr.seed = t.seed;
            tr.distribution = t.distribution;
            tr.randomParams = t.randomParams;
            tr.tolerance = t.loose ? tolerance(Policy::Loose) : strictTol;
            auto inputs = makeInputs(m_problem, t, m_device);
            auto params = paramsFor(t);
            std::vector<torch::Tensor> in64, par64;
            for (auto &x : inputs) in64.push_back(x.is_floating_point() ? x.to(torch::kFloat64) : x);
            for (auto &x : params) par64.push_back(x.is_floating_point() ? x.to(torch::kFloat64) : x);
            auto ref = m_reference->run(in64, par64);
            auto eager = m_reference->run(inputs, params);
            std::vector<torch::Tensor> copies;
            for (auto &x : inputs) copies.push_back(x.clone());
            for (auto &x : params) copies.push_back(x.clone());
            std::vector<torch::Tensor> outs;
            for (const auto &o : m_problem.outputs) outs.push_back(poisoned(o, m_device));

            Status s = runPlan(*prep, inputs, params, outs, PlanUse::Verify);
            cudaError_t se = cudaDeviceSynchronize();
            if (se != cudaSuccess && gpu::isSticky(se))
                m_contextLost = true;
            if (m_contextLost)
                return fail(r, Verdict::Crashed, s ? "the kernel faulted: " + gpu::errorText(se) : s.error().text());
            if (!s)
                return fail(r, Verdict::LaunchError, s.error().text());
            if (se != cudaSuccess)
                return fail(r, Verdict::Crashed, "the kernel failed: " + gpu::errorText(se));

            // A kernel may not write its inputs or parameters.
            std::size_t k = 0;
            for (auto *group : {&inputs, &params}) {
                for (std::size_t i = 0; i < group->size(); ++i, ++k) {
                    if (!torch::equal((*group)[i], copies[k])) {
                        const std::string &name = group == &inputs ? m_problem.inputs[i].name : m_problem.params[i].name;
                        tr.note = "the kernel wrote its input '" + name + "'";
                        r.trials.push_back(tr);
                        return fail(r, Verdict::Wrong, tr.note + " (trial " + std::to_string(t.index) + ")");
                    }
                }
            }
            tr.passed = true;
            tr.kernelbenchPassed = true;
            for (std::size_t i = 0; i < outs.size(); ++i) {
                Comparison c = compare(outs[i], ref[i]);
                tr.maxScaledError = std::max(tr.maxScaledError, c.maxScaled);
                tr.maxAbsError = std::max(tr.maxAbsError, c.maxAbs);
                tr.nonFinite += c.nonFinite;
                tr.unwritten += c.mismatched;
                // KernelBench's own check, at its own tolerance (1e-2), for comparison with
                // published results: against PyTorch's eager output, not the fp64 reference.
                const double kbTol = tolerance(Policy::Loose);
                // One number decides it and says by how much: the worst |out - eager| over
                // allclose's allowance (equal values, infinities included, are 0; NaN fails).
                const torch::Tensor mine = outs[i].to(eager[i].scalar_type());
                double ratio = 0;
                if (outs[i].numel() == 0) {
                    // nothing to compare
                } else if (outs[i].is_floating_point()) {
                    const torch::Tensor m64 = mine.to(torch::kFloat64), e64 = eager[i].to(torch::kFloat64);
                    const torch::Tensor diff = torch::where(m64 == e64, torch::zeros_like(e64), (m64 - e64).abs());
                    ratio = (diff / (kbTol + kbTol * e64.abs())).nan_to_num(1e300).max().item<double>();
                } else if (!torch::equal(mine, eager[i])) {
                    ratio = 1e300;
                }
                tr.kernelbenchRatio = std::max(tr.kernelbenchRatio, ratio);
                tr.kernelbenchPassed = tr.kernelbenchPassed && ratio <= 1;
                if (c.nonFinite || c.mismatched || !(c.maxScaled <= tr.tolerance)) {
                    tr.passed = false;
                    std::ostringstream s;
                    s << "output '" << m_problem.outputs[i].name << "' on trial " << t.index << " (" << t.distribution << "): ";
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
            r.maxScaledError = std::max(r.maxScaledError, tr.maxScaledError);
            r.trials.push_back(tr);
            if (!tr.passed)
                return fail(r, Verdict::Wrong, tr.note);
            if (t.index == 0) {
                prep->inputs = inputs;
                prep->params = params;
                firstOut = outs;
            }
        }
        r.kernelbenchPassed = std::all_of(r.trials.begin(), r.trials.end(), [](const TrialResult &t) { return t.kernelbenchPassed; });

        // The first trial's inputs once more: two results that differ beyond the tolerance mean a race.
        // Skipped on request: under compute-sanitizer one launch sequence shows what the tool can see,
        // and each one there runs ten to a hundred times slower.
        prep->outputs = firstOut;
        if (req.raceRerun) {
            std::vector<torch::Tensor> again;
            for (const auto &o : m_problem.outputs) again.push_back(poisoned(o, m_device));
            Status s = runPlan(*prep, prep->inputs, prep->params, again, PlanUse::Verify);
            cudaError_t se = cudaDeviceSynchronize();
            if (!s || se != cudaSuccess) {
                m_contextLost = m_contextLost || gpu::isSticky(se);
                return fail(r, Verdict::Crashed, !s ? s.error().text() : "the kernel failed on a re-run: " + gpu::errorText(se));
            }
            for (std::size_t i = 0; i < again.size(); ++i) {
                Comparison c = compare(again[i], firstOut[i]);
                if (c.nonFinite || c.mismatched || !(c.maxScaled <= strictTol))
                    return fail(r, Verdict::Racy,
                                "two runs on the same inputs differ: max scaled difference " + fmt(c.maxScaled) +
                                    " on output '" + m_problem.outputs[i].name + "'");
            }
            prep->outputs = again;
        }
    } catch (const std::exception &e) {
        const cudaError_t le = cudaGetLastError();
        m_contextLost = m_contextLost || gpu::isSticky(le);
        return fail(r, m_contextLost ? Verdict::Crashed : Verdict::Wrong, std::string("evaluation failed: ") + e.what());
    }
    r.verdict = Verdict::Correct;
    r.floorMs = floorMs(m_loaded.flops, m_loaded.bytes, r.precision, m_ceilings);
    prep->result = r;
    m_prepared[req.key] = std::move(prep);
    return r;
}

Result<Timing> Evaluator::time(const std::string &key, int trials, EvalResult *judged)
{
    auto it = m_prepared.find(key);
    if (it == m_prepared.end())
        return makeError("protocol", "no verified candidate under key '" + key + "'");
    Prepared &p = *it->second;
    auto t = timeLoop([&]() { return runPlan(p, p.inputs, p.params, p.outputs, PlanUse::Time); }, trials);
    if (t && judged) {
        // Faster than physics allows: the fastest dense rate and the datasheet bandwidth.
        Ceilings peak = m_ceilings;
        const gpu::Datasheet d = gpu::datasheetFor(m_gpu.name);
        peak.bandwidthGBs = std::max(peak.bandwidthGBs, d.bandwidthGBs);
        for (const auto &[k, v] : d.tflops) peak.tflops[k] = std::max(peak.tflops[k], v);
        const double fastest = floorMs(m_loaded.flops, m_loaded.bytes, Precision::FP16, peak);
        if (fastest > 0 && t->medianMs < fastest) {
            judged->verdict = Verdict::Suspect;
            judged->reason = "median " + fmt(t->medianMs) + " ms is below the physical floor of " + fmt(fastest) +
                             " ms: the kernel cannot have done all the work";
        }
    }
    return t;
}

} // namespace kf::ref
