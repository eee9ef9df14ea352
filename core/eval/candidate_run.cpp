#include "candidate_run.h"

namespace kf {

namespace {

// Clears the caller's view of the worker however the run ends.
struct Tracking {
    const std::function<void(WorkerClient *)> &track;
    Tracking(const std::function<void(WorkerClient *)> &t, WorkerClient *c) : track(t)
    {
        if (track)
            track(c);
    }
    ~Tracking()
    {
        if (track)
            track(nullptr);
    }
};

} // namespace

Result<CandidateRun> runCandidate(const Problem &problem, const std::string &source, const CandidateRunOptions &o)
{
    CandidateRun run;
    WorkerClient w(o.worker);
    Tracking tracking(o.track, &w);
    if (Status s = w.start(); !s)
        return s.error();
    run.hello = *w.info();
    if (!run.hello.gpu.present) {
        if (!o.compileArchWithoutGpu.empty()) {
            auto parsed = parseCandidate(source);
            auto c =
                w.compile(source, parsed ? kernelNames(*parsed) : std::vector<std::string>{}, o.compileArchWithoutGpu);
            if (c)
                run.compiled = *c;
        }
        return run;
    }
    if (auto loaded = w.load(problem); !loaded)
        return loaded.error();
    if (o.baseline) {
        run.baseline = o.baseline;
        w.setBaselineMs(o.baseline->timing.medianMs);
    } else if (o.timingTrials > 0) {
        if (auto b = w.baseline(o.baselineTrials)) {
            run.baseline = *b;
            run.baselineMeasured = true;
        } else {
            run.baselineError = b.error();
        }
    }
    (void)w.ceilings(); // for the roofline floor at the kernel's precision
    auto r = o.timingTrials > 0
        ? w.evaluate("candidate", source, o.cubin, o.policy, o.trials, o.timingTrials, o.timeout, o.seed,
                     o.loweredNames)
        : w.verify("candidate", source, o.cubin, o.policy, o.trials, o.timeout, true, o.seed, o.loweredNames);
    // A wrapper such as Nsight Compute writes its report when the worker exits.
    w.stop();
    run.stderrTail = w.stderrTail();
    if (!r)
        return r.error();
    run.result = *r;
    return run;
}

} // namespace kf
