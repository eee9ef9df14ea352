#include "commands.h"

#include "eval/candidate_run.h"
#include "eval/worker_client.h"
#include "kernel/candidate.h"
#include "kernel/export.h"
#include "problem/problem.h"
#include "search/hand_edit.h"
#include "search/records.h"
#include "search/session_setup.h"
#include "store/session_store.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace kf::cli {

namespace {

void printError(const Error &e) { std::fprintf(stderr, "kernelforge-cli: %s\n", e.text().c_str()); }

std::string shapeText(const std::vector<std::int64_t> &s)
{
    std::string t = "[";
    for (std::size_t i = 0; i < s.size(); ++i)
        t += (i ? "," : "") + std::to_string(s[i]);
    return t + "]";
}

std::string human(double v, const char *unit)
{
    const char *prefix[] = {"", "K", "M", "G", "T", "P"};
    int p = 0;
    while (v >= 1000 && p < 5) {
        v /= 1000;
        ++p;
    }
    char b[64];
    std::snprintf(b, sizeof b, "%.3g %s%s", v, prefix[p], unit);
    return b;
}

Result<Problem> problemArg(const Args &a)
{
    if (a.positional.empty())
        return makeError(ErrorCode::Usage, "name a problem (kernelforge-cli problems lists them)");
    return findProblem(a.positional[0], a.option("--variant").value_or(""));
}

Result<std::string> readFile(const std::string &path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return makeError(ErrorCode::Io, "cannot read " + path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

WorkerConfig workerConfig(const Args &a)
{
    WorkerConfig c;
    if (auto w = a.option("--worker"))
        c.argv = splitCommandLine(*w);
    return c;
}

int badProblem(const Error &e)
{
    printError(e);
    return BadInput;
}

} // namespace

int cmdProblems(const Args &a)
{
    nlohmann::json list = nlohmann::json::array();
    int count = 0;
    for (const std::string &dir : problemSearchPath()) {
        ProblemListing l = listProblems(dir);
        if (l.problems.empty() && l.errors.empty())
            continue;
        for (const Error &e : l.errors)
            printError(e);
        if (!a.flag("--json"))
            std::printf("%s\n  %-28s %-34s %12s %12s %10s\n", dir.c_str(), "name", "inputs", "FLOPs", "bytes",
                        "FLOP/B");
        for (const Problem &p : l.problems) {
            std::string ins;
            for (const auto &t : p.inputs)
                ins += (ins.empty() ? "" : " ") + t.name + shapeText(t.shape);
            const double flops = p.flops.value_or(0), bytes = p.bytes();
            if (a.flag("--json")) {
                list.push_back({{"name", p.name},
                                {"path", p.path},
                                {"description", p.description},
                                {"flops", flops},
                                {"bytes", bytes}});
            } else {
                std::printf("  %-28s %-34s %12s %12s %10.1f\n", p.name.c_str(), ins.c_str(), human(flops, "").c_str(),
                            human(bytes, "B").c_str(), bytes > 0 ? flops / bytes : 0.0);
            }
            ++count;
        }
        break; // the first folder that holds problems is the one in use
    }
    if (a.flag("--json"))
        std::cout << list.dump(2) << "\n";
    if (count == 0) {
        std::fprintf(stderr,
                     "kernelforge-cli: no problems found; set KERNELFORGE_PROBLEMS to a folder of problem files\n");
        return BadInput;
    }
    return Success;
}

namespace {
int showNode(const Args &a);
}

int cmdShow(const Args &a)
{
    // `show SESSION NODE`: two arguments, the first a file that is not a problem file.
    if (a.positional.size() == 2 && std::filesystem::is_regular_file(a.positional[0]) &&
        std::filesystem::path(a.positional[0]).extension() != ".toml")
        return showNode(a);
    auto p = problemArg(a);
    if (!p)
        return badProblem(p.error());
    std::printf("%s  (%s)\n%s\n\n", p->name.c_str(), p->path.c_str(), p->description.c_str());
    for (const auto &t : p->inputs)
        std::printf("  input  %-10s %-22s %s\n", t.name.c_str(), shapeText(t.shape).c_str(), toString(t.dtype).c_str());
    for (const auto &t : p->params)
        std::printf("  param  %-10s %-22s %s (%s)\n", t.name.c_str(), shapeText(t.shape).c_str(),
                    toString(t.dtype).c_str(), t.init.c_str());
    for (const auto &t : p->outputs)
        std::printf("  output %-10s %-22s %s\n", t.name.c_str(), shapeText(t.shape).c_str(), toString(t.dtype).c_str());
    std::printf("\n  constants:");
    for (const auto &[k, v] : p->constants)
        std::printf(" %s=%lld", k.c_str(), static_cast<long long>(v));
    std::printf("\n  FLOPs %s, bytes %s, policy %s\n\nreference:\n%s\n", human(p->flops.value_or(0), "").c_str(),
                human(p->bytes(), "B").c_str(), toString(p->policy).c_str(), p->referenceSource.c_str());
    return Success;
}

int cmdBaseline(const Args &a)
{
    auto p = problemArg(a);
    if (!p)
        return badProblem(p.error());
    WorkerClient w(workerConfig(a));
    if (Status s = w.start(); !s) {
        printError(s.error());
        return WorkerFailed;
    }
    if (!w.info()->gpu.present) {
        std::fprintf(stderr, "kernelforge-cli: timing needs an NVIDIA GPU: %s\n", w.info()->gpu.reason.c_str());
        return NoGpu;
    }
    auto l = w.load(*p);
    if (!l) {
        printError(l.error());
        return l.error().code == ErrorCode::Reference || l.error().code == ErrorCode::Parse ? BadInput : WorkerFailed;
    }
    auto b = w.baseline(a.intOption("--trials", 100));
    if (!b) {
        printError(b.error());
        return WorkerFailed;
    }
    if (a.flag("--json")) {
        std::cout << nlohmann::json{{"problem", p->name},
                                    {"gpu", w.info()->gpu.name},
                                    {"timing", b->timing},
                                    {"flags", b->flags}}
                         .dump(2)
                  << "\n";
    } else {
        std::printf("%s on %s: eager PyTorch median %.4f ms (min %.4f, p10 %.4f, p90 %.4f, %d runs, L2 flushed)\n",
                    p->name.c_str(), w.info()->gpu.name.c_str(), b->timing.medianMs, b->timing.minMs, b->timing.p10Ms,
                    b->timing.p90Ms, b->timing.trials);
        std::printf("PyTorch flags: %s\n", b->flags.dump().c_str());
    }
    return Success;
}

namespace {
std::string fmtRatio(double r)
{
    char b[32];
    std::snprintf(b, sizeof b, r >= 1e300 ? "inf" : "%.3g", r);
    return b;
}

void printResult(const EvalResult &r, const std::optional<Timing> &eager)
{
    std::printf("verdict     %s%s%s\n", toString(r.verdict).c_str(), r.reason.empty() ? "" : ": ", r.reason.c_str());
    if (r.seed != 0)
        std::printf("seed        %llu (--seed %llu replays these inputs)\n", (unsigned long long)r.seed,
                    (unsigned long long)r.seed);
    std::printf("precision   %s, policy %s (tolerance %.0e)\n", toString(r.precision).c_str(),
                toString(r.policy).c_str(), tolerance(r.policy));
    if (!r.trials.empty()) {
        std::printf("trials      %-3s %-12s %-7s %-13s %-13s %-6s %s\n", "#", "inputs", "params", "max scaled",
                    "max abs", "pass", "KernelBench");
        for (const TrialResult &t : r.trials)
            std::printf(
                "            %-3d %-12s %-7s %-13.3e %-13.3e %-6s %s\n", t.index, t.distribution.c_str(),
                t.randomParams ? "random" : "init", t.maxScaledError, t.maxAbsError, t.passed ? "yes" : "NO",
                (t.kernelbenchPassed ? "pass" : "fail (worst " + fmtRatio(t.kernelbenchRatio) + "x its allowance)")
                    .c_str());
    }
    for (const auto &[k, res] : r.resources)
        std::printf("kernel      %s: %d registers, %d B static shared, %d B stack\n", k.c_str(), res.registers,
                    res.sharedBytes, res.stackBytes);
    if (r.timing) {
        const Timing &t = *r.timing;
        std::printf("time        median %.4f ms (min %.4f, p10 %.4f, p90 %.4f, %d runs, L2 flushed)%s\n", t.medianMs,
                    t.minMs, t.p10Ms, t.p90Ms, t.trials,
                    r.sanitizer && r.sanitizer->outcome == "finding" ? ", measured before the sanitizer gate" : "");
        if (eager && t.medianMs > 0)
            std::printf("eager       %.4f ms  ->  speedup %.3fx\n", eager->medianMs, eager->medianMs / t.medianMs);
        if (r.floorMs > 0)
            std::printf("roofline    floor %.4f ms at %s: %.1f %% of the floor's speed\n", r.floorMs,
                        toString(r.precision).c_str(), 100.0 * r.floorMs / t.medianMs);
    }
    if (r.timingCheck) {
        const TimingCheck &c = *r.timingCheck;
        if (c.checked)
            std::printf("checked     %d timed runs over %d verified input sets, worst scaled error %.3e\n", c.runs,
                        c.inputSets, c.worstScaledError);
        if (!c.floorNote.empty())
            std::printf("floor       %s\n", c.floorNote.c_str());
    }
    if (r.peakGpuBytes > 0)
        std::printf("gpu memory  %.2f GB at most in use while verifying\n", double(r.peakGpuBytes) / 1e9);
    if (r.sanitizer) {
        const SanitizerCheck &c = *r.sanitizer;
        std::string tools;
        for (const auto &t : c.tools)
            tools += (tools.empty() ? "" : ", ") + t;
        char when[64];
        std::snprintf(when, sizeof when, "%.1f s", c.seconds);
        std::printf("sanitizer   %s (%s; %s)%s%s\n",
                    c.outcome == "unchecked" ? "UNCHECKED: compute-sanitizer could not judge it" : c.outcome.c_str(),
                    tools.c_str(), c.sameAs ? ("same source as #" + std::to_string(c.sameAs)).c_str() : when,
                    c.note.empty() ? "" : ": ", c.note.c_str());
    }
    if (!r.sanitizerReport.empty())
        std::printf("\ncompute-sanitizer's report:\n%s%s", r.sanitizerReport.c_str(),
                    r.sanitizerReport.back() == '\n' ? "" : "\n");
}

int showNode(const Args &a)
{
    auto store = SessionStore::open(a.positional[0], true);
    if (!store) {
        printError(store.error());
        return BadInput;
    }
    std::string text = a.positional[1];
    if (!text.empty() && text[0] == '#')
        text.erase(0, 1);
    std::int64_t id = 0;
    try {
        std::size_t used = 0;
        id = std::stoll(text, &used);
        if (used != text.size())
            throw std::invalid_argument("node");
    } catch (const std::exception &) {
        std::fprintf(stderr,
                     "kernelforge-cli: a node is a number (as `report` and the workbench show them), not '%s'\n",
                     a.positional[1].c_str());
        return BadInput;
    }
    auto node = store->node(id);
    if (!node) {
        std::fprintf(stderr, "kernelforge-cli: %s has no node %lld\n", a.positional[0].c_str(), (long long)id);
        return BadInput;
    }
    std::printf("#%lld %s: %s, round %d\n", (long long)id, node->title.c_str(), toString(node->kind).c_str(),
                node->round);
    auto reading = readCandidate(*node);
    if (!reading) {
        std::printf("status      %s%s%s\n", node->status.c_str(), node->reason.empty() ? "" : ": ",
                    node->reason.c_str());
        return Success;
    }
    std::optional<Timing> eager;
    if (auto meta = store->sessionMeta(); meta && meta->baseline && baselineMedianMs(meta->baseline) > 0) {
        try {
            eager = (*meta->baseline)["timing"].get<Timing>();
        } catch (const std::exception &) {
        }
    }
    printResult(reading->result, eager);
    return Success;
}

int recordSession(const std::string &path, const Problem &p, const std::string &source,
                  const std::string &candidatePath, const EvalResult &r, const std::optional<BaselineResult> &baseline,
                  const Hello &hello)
{
    SessionMeta m = sessionMetaFor(p, "manual", "kernelforge-cli " + hello.worker);
    m.gpuName = hello.gpu.name;
    if (baseline)
        m.baseline = nlohmann::json{{"timing", baseline->timing}, {"flags", baseline->flags}};
    auto store = openOrCreateSession(path, m);
    if (!store) {
        printError(store.error());
        return BadInput;
    }
    if (auto id = recordHandEdited(*store, p, std::nullopt, candidatePath, source, r); !id) {
        printError(id.error());
        return BadInput;
    }
    return Success;
}

} // namespace

namespace {

// What `eval` runs: a problem and a candidate file, or a node of a session (a replay).
struct EvalInput {
    Problem problem;
    std::string source;
    std::string label;                 // the file, or "SESSION #NODE"
    std::optional<std::uint64_t> seed; // the node's recorded seed, for a replay
    std::optional<BaselineResult> baseline;
};

std::optional<BaselineResult> baselineOf(const SessionMeta &meta)
{
    if (!meta.baseline || baselineMedianMs(meta.baseline) <= 0)
        return std::nullopt;
    try {
        BaselineResult b;
        b.timing = (*meta.baseline)["timing"].get<Timing>();
        if (meta.baseline->contains("flags"))
            b.flags = (*meta.baseline)["flags"];
        return b;
    } catch (const std::exception &) {
        return std::nullopt;
    }
}

bool isSessionFile(const std::string &path) { return path.size() > 10 && path.ends_with(".kfsession"); }

Result<EvalInput> evalInputFromSession(const Args &a)
{
    const std::string &path = a.positional[0];
    auto store = SessionStore::open(path, true);
    if (!store)
        return store.error();
    auto meta = store->sessionMeta();
    if (!meta)
        return meta.error();
    std::int64_t id = 0;
    try {
        id = std::stoll(a.positional[1][0] == '#' ? a.positional[1].substr(1) : a.positional[1]);
    } catch (const std::exception &) {
        return makeError(ErrorCode::Usage, "a node is a number, not '" + a.positional[1] + "'");
    }
    auto node = store->node(id);
    if (!node)
        return makeError(ErrorCode::NotFound, path + " has no node " + std::to_string(id));
    if (node->kind != NodeKind::Candidate || node->text.empty())
        return makeError(ErrorCode::NotFound, "node " + std::to_string(id) + " of " + path + " is not a candidate");
    auto problem = parseProblem(meta->problemText, meta->problemName + ".toml", meta->problemVariant);
    if (!problem)
        return problem.error();
    EvalInput in{*problem, node->text, path + " #" + std::to_string(id), std::nullopt, baselineOf(*meta)};
    if (auto reading = readCandidate(*node); reading && reading->result.seed != 0)
        in.seed = reading->result.seed;
    return in;
}

Result<EvalInput> evalInputFromFiles(const Args &a)
{
    auto p = problemArg(a);
    if (!p)
        return p.error();
    const std::string path = a.positional[1];
    auto source = readFile(path);
    if (!source)
        return source.error();
    EvalInput in{*p, *source, path, std::nullopt, std::nullopt};
    // A session's eager baseline is pinned: its speedups stay comparable with each other.
    if (auto session = a.option("--session"))
        if (auto store = SessionStore::open(*session, true))
            if (auto meta = store->sessionMeta())
                in.baseline = baselineOf(*meta);
    return in;
}

Result<std::optional<std::uint64_t>> seedOption(const Args &a)
{
    auto v = a.option("--seed");
    if (!v)
        return std::optional<std::uint64_t>();
    try {
        std::size_t used = 0;
        const unsigned long long seed = std::stoull(*v, &used);
        if (used == v->size() && seed != 0)
            return std::optional<std::uint64_t>(seed);
    } catch (const std::exception &) {
    }
    return makeError(ErrorCode::Usage, "--seed takes a positive integer (as `show` prints it), not '" + *v + "'");
}

} // namespace

int cmdEval(const Args &a)
{
    if (a.positional.size() < 2) {
        std::fprintf(stderr, "kernelforge-cli: eval needs PROBLEM and CANDIDATE.cu, or SESSION.kfsession and NODE\n");
        return BadInput;
    }
    const bool replay = isSessionFile(a.positional[0]);
    auto input = replay ? evalInputFromSession(a) : evalInputFromFiles(a);
    if (!input)
        return badProblem(input.error());
    auto cand = parseCandidate(input->source, input->label);
    if (!cand)
        return badProblem(cand.error());
    if (Status s = checkCandidate(*cand, input->problem, input->label); !s)
        return badProblem(s.error());
    auto seed = seedOption(a);
    if (!seed)
        return badProblem(seed.error());

    CandidateRunOptions o;
    o.worker = workerConfig(a);
    o.policy = input->problem.policy;
    if (auto v = a.option("--policy")) {
        auto pol = parsePolicy(*v);
        if (!pol) {
            std::fprintf(stderr, "kernelforge-cli: --policy is strict or loose, not '%s'\n", v->c_str());
            return BadInput;
        }
        o.policy = *pol;
    }
    o.trials = a.intOption("--trials", 5);
    o.timingTrials = a.intOption("--timing-trials", 100);
    o.baselineTrials = o.timingTrials;
    o.seed = *seed ? *seed : input->seed;
    o.baseline = input->baseline;
    o.compileArchWithoutGpu = a.option("--arch").value_or("sm_90a");
    auto run = runCandidate(input->problem, input->source, o);
    if (!run) {
        printError(run.error());
        const ErrorCode code = run.error().code;
        return code == ErrorCode::Reference || code == ErrorCode::Parse ? BadInput : WorkerFailed;
    }
    if (!run->result) {
        // Still worth knowing whether it compiles: NVRTC needs no GPU.
        if (run->compiled && run->compiled->ok)
            std::printf("compiles for %s\n", o.compileArchWithoutGpu.c_str());
        else if (run->compiled)
            for (const auto &d : run->compiled->diagnostics)
                std::printf("%s:%d: %s: %s\n", input->label.c_str(), d.line, d.severity.c_str(), d.message.c_str());
        std::fprintf(stderr, "kernelforge-cli: evaluation needs an NVIDIA GPU: %s\n", run->hello.gpu.reason.c_str());
        return NoGpu;
    }
    if (run->baselineError)
        printError(*run->baselineError);
    const EvalResult &r = *run->result;
    if (auto s = a.option("--session"); s && !replay)
        if (int rc = recordSession(*s, input->problem, input->source, input->label, r,
                                   run->baselineMeasured ? run->baseline : std::nullopt, run->hello);
            rc != Success)
            return rc;
    if (a.flag("--json")) {
        nlohmann::json j{
            {"problem", input->problem.name}, {"candidate", input->label}, {"gpu", run->hello.gpu.name}, {"result", r}};
        if (run->baseline) {
            j["eager"] = run->baseline->timing;
            if (r.timing && r.timing->medianMs > 0)
                j["speedup"] = run->baseline->timing.medianMs / r.timing->medianMs;
        }
        std::cout << j.dump(2) << "\n";
    } else {
        std::printf("%s on %s, candidate %s\n", input->problem.name.c_str(), run->hello.gpu.name.c_str(),
                    input->label.c_str());
        printResult(r, run->baseline ? std::optional<Timing>(run->baseline->timing) : std::nullopt);
    }
    return r.verdict == Verdict::Correct ? Success : NotCorrect;
}

int cmdExport(const Args &a)
{
    auto p = problemArg(a);
    if (!p)
        return badProblem(p.error());
    if (a.positional.size() < 2 || !a.option("--output")) {
        std::fprintf(stderr, "kernelforge-cli: export needs PROBLEM CANDIDATE.cu -o FILE.cu\n");
        return BadInput;
    }
    auto source = readFile(a.positional[1]);
    if (!source)
        return badProblem(source.error());
    auto cand = parseCandidate(*source, a.positional[1]);
    if (!cand)
        return badProblem(cand.error());
    ExportInfo info;
    info.arch = a.option("--arch").value_or("sm_90a");
    try {
        if (auto s = a.option("--speedup"))
            info.speedup = std::stod(*s);
        if (auto s = a.option("--max-error"))
            info.maxError = std::stod(*s);
    } catch (const std::exception &) {
        std::fprintf(stderr, "kernelforge-cli: --speedup and --max-error take numbers\n");
        return BadInput;
    }
    auto text = exportCandidate(*cand, *p, info);
    if (!text)
        return badProblem(text.error());
    const std::string out = *a.option("--output");
    std::ofstream f(out, std::ios::binary);
    if (!(f << *text)) {
        std::fprintf(stderr, "kernelforge-cli: cannot write %s\n", out.c_str());
        return BadInput;
    }
    std::printf("wrote %s (launcher %s)\n", out.c_str(), exportLauncherName(*p).c_str());
    return Success;
}

} // namespace kf::cli
