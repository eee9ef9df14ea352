// Timing: every timed run is a checked run (docs/verification.md, "Timing").
#include "evaluator.h"
#include "evaluator_parts.h"
#include "gpu/physical_floor.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>
#include <sstream>

namespace kf::ref {

Timing summarize(std::vector<double> &ms)
{
    Timing t;
    if (ms.empty())
        return t;
    std::sort(ms.begin(), ms.end());
    auto at = [&](double q) { return ms[std::min(ms.size() - 1, std::size_t(q * double(ms.size() - 1) + 0.5))]; };
    t.trials = int(ms.size());
    t.medianMs = ms.size() % 2 ? ms[ms.size() / 2] : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
    t.minMs = ms.front();
    t.maxMs = ms.back();
    t.p10Ms = at(0.1);
    t.p90Ms = at(0.9);
    t.meanMs = std::accumulate(ms.begin(), ms.end(), 0.0) / double(ms.size());
    return t;
}

namespace {

// Events, created and destroyed together.
class Events {
public:
    explicit Events(std::size_t n) : m_ev(n)
    {
        for (auto &e : m_ev)
            cudaEventCreate(&e);
    }
    ~Events()
    {
        for (auto &e : m_ev)
            cudaEventDestroy(e);
    }
    void record(std::size_t i) { cudaEventRecord(m_ev[i], nullptr); } // the legacy default stream, libtorch's too
    double ms(std::size_t from, std::size_t to) const
    {
        float t = 0;
        cudaEventElapsedTime(&t, m_ev[from], m_ev[to]);
        return t;
    }

private:
    std::vector<cudaEvent_t> m_ev;
};

// The order of the timed runs over the kept input sets: each round a fresh shuffle, so every set is
// timed about equally often and the next set cannot be predicted from the last.
std::vector<std::size_t> runOrder(std::size_t sets, int runs, std::uint64_t seed)
{
    std::mt19937_64 rng(seed ^ 0x5851f42d4c957f2dull);
    std::vector<std::size_t> order, round(sets);
    std::iota(round.begin(), round.end(), 0);
    while (order.size() < std::size_t(runs)) {
        std::shuffle(round.begin(), round.end(), rng);
        order.insert(order.end(), round.begin(), round.end());
    }
    order.resize(std::size_t(runs));
    return order;
}

// Canary runs: a few timed runs, at random, find the previous run's outputs (from another input
// set) in place of the poison. An honest kernel overwrites them like the poison; one that skips
// work where its output already holds numbers leaves another set's answer, and its check fails.
std::vector<bool> canaryRuns(const std::vector<std::size_t> &order, std::uint64_t seed)
{
    std::vector<std::size_t> eligible;
    for (std::size_t i = 1; i < order.size(); ++i)
        if (order[i - 1] != order[i])
            eligible.push_back(i);
    std::mt19937_64 rng(seed ^ 0x2545f4914f6cdd1dull);
    std::shuffle(eligible.begin(), eligible.end(), rng);
    eligible.resize(std::min(eligible.size(), std::max<std::size_t>(2, order.size() / 8)));
    std::vector<bool> canary(order.size(), false);
    for (std::size_t i : eligible)
        canary[i] = true;
    return canary;
}

constexpr int kWarmUps = 3; // module load, allocator, the driver's caches

} // namespace

Status Evaluator::finishRuns(const Status &launched, const char *what)
{
    const cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess && gpu::isSticky(e))
        m_contextLost = true;
    if (!launched)
        return launched;
    if (e != cudaSuccess)
        return makeError(m_contextLost ? ErrorCode::Fatal : ErrorCode::Launch,
                         std::string(what) + " failed: " + gpu::errorText(e));
    return Ok{};
}

Result<Timing> Evaluator::timeLoop(const std::function<Status()> &body, int trials)
{
    trials = std::max(trials, 1);
    for (int i = 0; i < kWarmUps; ++i) {
        if (Status s = body(); !s)
            return s.error();
    }
    if (Status s = finishRuns(Ok{}, "warm-up"); !s)
        return s.error();
    Events ev(2 * std::size_t(trials));
    Status failed = Ok{};
    for (int i = 0; i < trials && failed; ++i) {
        cudaMemsetAsync(m_flush.data_ptr(), i & 0xff, std::size_t(m_flush.numel()), nullptr);
        ev.record(2 * i);
        failed = body();
        ev.record(2 * i + 1);
    }
    if (Status s = finishRuns(failed, "timed run"); !s)
        return s.error();
    std::vector<double> ms;
    for (int i = 0; i < trials; ++i)
        ms.push_back(ev.ms(2 * i, 2 * i + 1));
    return summarize(ms);
}

double Evaluator::measureLaunchMs()
{
    constexpr int runs = 21;
    for (int i = 0; i < kWarmUps; ++i)
        (void)m_checks->empty();
    Events ev(2 * runs);
    for (int i = 0; i < runs; ++i) {
        ev.record(2 * i);
        (void)m_checks->empty();
        ev.record(2 * i + 1);
    }
    if (cudaDeviceSynchronize() != cudaSuccess)
        return 0;
    std::vector<double> ms;
    for (int i = 0; i < runs; ++i)
        ms.push_back(ev.ms(2 * i, 2 * i + 1));
    return summarize(ms).medianMs;
}

Status Evaluator::reloadModule(Prepared &p)
{
    // A fresh module: no __device__ variable keeps what the verified runs left in it.
    p.module.reset();
    auto module = gpu::Module::load(p.cubin, p.names);
    if (!module) {
        m_contextLost = module.error().code == ErrorCode::Fatal;
        return module.error();
    }
    p.module = std::move(*module);
    return Ok{};
}

// Reads each timed run's check: the first that failed makes the verdict inconsistent.
Status Evaluator::judgeTimedRuns(const Prepared &p, const std::vector<std::size_t> &order,
                                 const std::vector<bool> &canary, const std::vector<std::uint64_t> &host, TimedRun &out)
{
    TimingCheck &check = out.check;
    const int trials = int(order.size());
    const std::size_t nOut = m_problem.outputs.size();
    for (int i = 0; i < trials; ++i) {
        const TrialData &d = p.sets[order[std::size_t(i)]];
        for (std::size_t k = 0; k < nOut; ++k) {
            const CompareStats c = CheckKernels::read(host.data() + (std::size_t(i) * nOut + k) * kStatsWords);
            check.worstScaledError = std::max(check.worstScaledError, c.maxScaled);
            if (c.nonFinite || c.mismatched || !(c.maxScaled <= d.tolerance)) {
                std::ostringstream s;
                s << "timed run " << i + 1 << " of " << trials << " (input set of trial " << d.spec.index << ", "
                  << d.spec.distribution << ") failed its check on output '" << m_problem.outputs[k].name << "': ";
                if (c.nonFinite)
                    s << c.nonFinite << " elements not written or not finite";
                else if (c.mismatched)
                    s << c.mismatched << " elements differ";
                else
                    s << "max scaled error " << fmt(c.maxScaled) << " > tolerance " << fmt(d.tolerance);
                s << (canary[std::size_t(i)] ? " (a canary run: the previous run's outputs stood in for the poison)"
                                             : "")
                  << "; the same kernel passed verification on these inputs";
                out.verdict = Verdict::Inconsistent;
                out.reason = s.str();
                check.runs = i + 1;
                break;
            }
        }
        if (out.verdict == Verdict::Inconsistent)
            break;
        check.runs = i + 1;
    }
    // Inputs are compared again after the last run: a timed run may not write them either.
    for (std::size_t k = 0; k < p.sets.size() && out.verdict == Verdict::Correct; ++k) {
        auto changed = changedInput(p.sets[k], p.salt);
        if (!changed)
            return changed.error();
        if (!changed->empty()) {
            out.verdict = Verdict::Inconsistent;
            out.reason = "the kernel wrote its input '" + *changed + "' while it was timed";
        }
    }
    return Ok{};
}

Result<TimedRun> Evaluator::time(const std::string &key, int trials, bool checked)
{
    const auto wallStart = std::chrono::steady_clock::now();
    auto it = m_prepared.find(key);
    if (it == m_prepared.end())
        return makeError(ErrorCode::UnknownKey, "no verified candidate under key '" + key + "'");
    Prepared &p = *it->second;
    if (p.sets.empty())
        return makeError(ErrorCode::Engine, "no verified input set is kept for timing '" + key + "'");
    trials = std::max(trials, 1);

    if (Status s = reloadModule(p); !s)
        return s.error();

    const std::size_t nOut = m_problem.outputs.size();
    std::vector<torch::Tensor> outs;
    for (const auto &o : m_problem.outputs)
        outs.push_back(torch::empty(o.shape, torch::TensorOptions().dtype(torchDtype(o.dtype)).device(m_device)));
    auto slots = torch::zeros({std::int64_t(std::size_t(trials) * nOut * kStatsWords)},
                              torch::TensorOptions().dtype(torch::kInt64).device(m_device));
    auto *slot = static_cast<std::uint64_t *>(slots.data_ptr());
    m_memory.notePeak();
    const std::vector<std::size_t> order = runOrder(p.sets.size(), trials, p.seed);
    const std::vector<bool> canary = canaryRuns(order, p.seed);

    // Every run, warm-ups too, sees what a verified run sees: poisoned outputs and scratch.
    auto prepareRun = [&]() -> Status {
        if (!checked)
            return Ok{};
        if (Status s = poisonOutputs(outs); !s)
            return s;
        poisonScratch(p);
        return Ok{};
    };
    Status failed = Ok{};
    for (int i = 0; i < kWarmUps && failed; ++i) {
        const TrialData &d = p.sets[std::size_t(i) % p.sets.size()];
        failed = prepareRun();
        if (failed)
            failed = launchPlan(p, d.inputs, d.params, outs);
    }
    if (Status s = finishRuns(failed, "warm-up"); !s)
        return s.error();

    // Per run: [a] poison [b] flush [c] launches [d] compare [e]. Only c..d is the time.
    Events ev(5 * std::size_t(trials));
    for (int i = 0; i < trials && failed; ++i) {
        const TrialData &d = p.sets[order[std::size_t(i)]];
        const std::size_t e0 = 5 * std::size_t(i);
        ev.record(e0);
        if (!canary[std::size_t(i)])
            failed = prepareRun();
        ev.record(e0 + 1);
        cudaMemsetAsync(m_flush.data_ptr(), i & 0xff, std::size_t(m_flush.numel()), nullptr);
        ev.record(e0 + 2);
        if (failed)
            failed = launchPlan(p, d.inputs, d.params, outs);
        ev.record(e0 + 3);
        if (failed && checked) {
            auto c = compareOutputs(outs, d, nullptr, slot + std::size_t(i) * nOut * kStatsWords, false);
            if (!c)
                failed = c.error();
        }
        ev.record(e0 + 4);
    }
    if (Status s = finishRuns(failed, "timed run"); !s)
        return s.error();

    TimedRun out;
    TimingCheck &check = out.check;
    check.checked = checked;
    check.inputSets = int(p.sets.size());
    check.launchMs = m_launchMs;
    std::vector<double> ms;
    double checkMs = 0;
    for (int i = 0; i < trials; ++i) {
        const std::size_t e0 = 5 * std::size_t(i);
        ms.push_back(ev.ms(e0 + 2, e0 + 3));
        checkMs += ev.ms(e0, e0 + 1) + ev.ms(e0 + 3, e0 + 4);
    }
    check.checkSeconds = checkMs / 1e3;

    if (checked) {
        std::vector<std::uint64_t> host(std::size_t(trials) * nOut * kStatsWords);
        if (cudaMemcpy(host.data(), slot, host.size() * 8, cudaMemcpyDeviceToHost) != cudaSuccess)
            return makeError(ErrorCode::Engine, "reading the timed runs' checks back failed");
        if (Status s = judgeTimedRuns(p, order, canary, host, out); !s)
            return s.error();
    }
    check.wallSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
    if (out.verdict != Verdict::Correct)
        return out; // no time for work that did not pass its check

    out.timing = summarize(ms);
    const gpu::FloorJudgement floor = gpu::judgeAgainstFloor(out.timing->medianMs, m_loaded.flops, m_loaded.bytes,
                                                             m_ceilings, m_gpu.name, m_launchMs);
    check.physicalFloorMs = floor.physicalFloorMs;
    check.floorNote = floor.note;
    if (floor.suspect) {
        out.verdict = Verdict::Suspect;
        out.reason = floor.reason;
    }
    return out;
}

} // namespace kf::ref
