#include "eval/protocol.h"
#include "util/base64.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace kf {

using nlohmann::json;

namespace {

// JSON has no NaN or infinity, and nlohmann writes them as null, which would turn "the error was
// infinite" into "no error". Non-finite values travel as the strings "nan", "inf" and "-inf".
json number(double v)
{
    if (std::isnan(v))
        return "nan";
    if (std::isinf(v))
        return v > 0 ? "inf" : "-inf";
    return v;
}

double readNumber(const json &v)
{
    if (v.is_number())
        return v.get<double>();
    if (v.is_string()) {
        const auto &s = v.get_ref<const std::string &>();
        if (s == "nan")
            return std::numeric_limits<double>::quiet_NaN();
        if (s == "inf")
            return std::numeric_limits<double>::infinity();
        if (s == "-inf")
            return -std::numeric_limits<double>::infinity();
    }
    throw std::invalid_argument("expected a number, got " + v.dump());
}

// Missing and null keys keep the field's default, so either side may add optional keys later
// without breaking the other.
template <typename T>
void opt(const json &j, const char *key, T &field)
{
    auto it = j.find(key);
    if (it == j.end() || it->is_null())
        return;
    if constexpr (std::is_same_v<T, double>)
        field = readNumber(*it);
    else
        it->get_to(field);
}

void optNumberMap(const json &j, const char *key, std::map<std::string, double> &field)
{
    auto it = j.find(key);
    if (it == j.end() || it->is_null())
        return;
    field.clear();
    for (const auto &[name, value] : it->items())
        field[name] = readNumber(value);
}

template <typename E>
void optEnum(const json &j, const char *key, E &field, std::optional<E> (*parse)(std::string_view), const char *what)
{
    auto it = j.find(key);
    if (it == j.end() || it->is_null())
        return;
    const auto &text = it->get_ref<const std::string &>();
    auto value = parse(text);
    if (!value)
        throw std::invalid_argument(std::string("unknown ") + what + " \"" + text + "\"");
    field = *value;
}

void requireObject(const json &j, const char *what)
{
    if (!j.is_object())
        throw std::invalid_argument(std::string(what) + " must be a JSON object, got " + j.dump());
}

} // namespace

// ---- GPU and handshake ----------------------------------------------------------------------

void to_json(json &j, const GpuInfo &g)
{
    j = json{{"present", g.present},
             {"reason", g.reason},
             {"name", g.name},
             {"arch", g.arch},
             {"major", g.major},
             {"minor", g.minor},
             {"sms", g.sms},
             {"l2_bytes", g.l2Bytes},
             {"memory_bytes", g.memoryBytes},
             {"smem_per_block_optin", g.smemPerBlockOptin},
             {"smem_per_sm", g.smemPerSm}};
}

void from_json(const json &j, GpuInfo &g)
{
    requireObject(j, "gpu");
    g = GpuInfo{};
    opt(j, "present", g.present);
    opt(j, "reason", g.reason);
    opt(j, "name", g.name);
    opt(j, "arch", g.arch);
    opt(j, "major", g.major);
    opt(j, "minor", g.minor);
    opt(j, "sms", g.sms);
    opt(j, "l2_bytes", g.l2Bytes);
    opt(j, "memory_bytes", g.memoryBytes);
    opt(j, "smem_per_block_optin", g.smemPerBlockOptin);
    opt(j, "smem_per_sm", g.smemPerSm);
}

void to_json(json &j, const Hello &h)
{
    j = json{{"protocol", h.protocol},        {"worker", h.worker},          {"torch", h.torch},
             {"cuda_runtime", h.cudaRuntime}, {"cuda_driver", h.cudaDriver}, {"gpu", h.gpu}};
}

void from_json(const json &j, Hello &h)
{
    requireObject(j, "hello");
    h = Hello{};
    h.protocol = 0; // a peer that does not say which protocol it speaks speaks none we know
    opt(j, "protocol", h.protocol);
    opt(j, "worker", h.worker);
    opt(j, "torch", h.torch);
    opt(j, "cuda_runtime", h.cudaRuntime);
    opt(j, "cuda_driver", h.cudaDriver);
    opt(j, "gpu", h.gpu);
}

void to_json(json &j, const Ceilings &c)
{
    json rates = json::object();
    for (const auto &[name, value] : c.tflops)
        rates[name] = number(value);
    j = json{{"bandwidth_gbs", number(c.bandwidthGBs)}, {"tflops", rates}};
}

void from_json(const json &j, Ceilings &c)
{
    requireObject(j, "ceilings");
    c = Ceilings{};
    opt(j, "bandwidth_gbs", c.bandwidthGBs);
    optNumberMap(j, "tflops", c.tflops);
}

void to_json(json &j, const Timing &t)
{
    j = json{{"median_ms", number(t.medianMs)},
             {"min_ms", number(t.minMs)},
             {"max_ms", number(t.maxMs)},
             {"mean_ms", number(t.meanMs)},
             {"p10_ms", number(t.p10Ms)},
             {"p90_ms", number(t.p90Ms)},
             {"trials", t.trials}};
}

void from_json(const json &j, Timing &t)
{
    requireObject(j, "timing");
    t = Timing{};
    opt(j, "median_ms", t.medianMs);
    opt(j, "min_ms", t.minMs);
    opt(j, "max_ms", t.maxMs);
    opt(j, "mean_ms", t.meanMs);
    opt(j, "p10_ms", t.p10Ms);
    opt(j, "p90_ms", t.p90Ms);
    opt(j, "trials", t.trials);
}

// ---- problem ----------------------------------------------------------------------------------

void to_json(json &j, const OpNode &n)
{
    j = json{{"op", n.op},
             {"inputs", n.inputs},
             {"outputs", n.outputs},
             {"input_shapes", n.inputShapes},
             {"output_shapes", n.outputShapes},
             {"constants", n.constants},
             {"flops", number(n.flops)}};
}

void from_json(const json &j, OpNode &n)
{
    requireObject(j, "op node");
    n = OpNode{};
    opt(j, "op", n.op);
    opt(j, "inputs", n.inputs);
    opt(j, "outputs", n.outputs);
    opt(j, "input_shapes", n.inputShapes);
    opt(j, "output_shapes", n.outputShapes);
    if (auto it = j.find("constants"); it != j.end())
        n.constants = *it;
    opt(j, "flops", n.flops);
}

void to_json(json &j, const TensorSpec &t)
{
    j = json{{"name", t.name}, {"shape", t.shape}, {"dtype", toString(t.dtype)}};
}

void from_json(const json &j, TensorSpec &t)
{
    requireObject(j, "tensor");
    t = TensorSpec{};
    opt(j, "name", t.name);
    opt(j, "shape", t.shape);
    optEnum(j, "dtype", t.dtype, &parseDType, "dtype");
}

void to_json(json &j, const LoadedProblem &p)
{
    j = json{{"graph", p.graph},
             {"flops", number(p.flops)},
             {"flops_source", p.flopsSource},
             {"bytes", number(p.bytes)},
             {"outputs", p.outputs}};
}

void from_json(const json &j, LoadedProblem &p)
{
    requireObject(j, "problem");
    p = LoadedProblem{};
    opt(j, "graph", p.graph);
    opt(j, "flops", p.flops);
    opt(j, "flops_source", p.flopsSource);
    opt(j, "bytes", p.bytes);
    opt(j, "outputs", p.outputs);
}

// ---- results ----------------------------------------------------------------------------------

void to_json(json &j, const TrialResult &t)
{
    j = json{{"index", t.index},
             {"seed", t.seed},
             {"distribution", t.distribution},
             {"random_params", t.randomParams},
             {"max_scaled_error", number(t.maxScaledError)},
             {"max_abs_error", number(t.maxAbsError)},
             {"tolerance", number(t.tolerance)},
             {"passed", t.passed},
             {"kernelbench_passed", t.kernelbenchPassed},
             {"kernelbench_ratio", number(t.kernelbenchRatio)},
             {"unwritten", t.unwritten},
             {"non_finite", t.nonFinite},
             {"note", t.note}};
}

void from_json(const json &j, TrialResult &t)
{
    requireObject(j, "trial");
    t = TrialResult{};
    opt(j, "index", t.index);
    opt(j, "seed", t.seed);
    opt(j, "distribution", t.distribution);
    opt(j, "random_params", t.randomParams);
    opt(j, "max_scaled_error", t.maxScaledError);
    opt(j, "max_abs_error", t.maxAbsError);
    opt(j, "tolerance", t.tolerance);
    opt(j, "passed", t.passed);
    opt(j, "kernelbench_passed", t.kernelbenchPassed);
    opt(j, "kernelbench_ratio", t.kernelbenchRatio);
    opt(j, "unwritten", t.unwritten);
    opt(j, "non_finite", t.nonFinite);
    opt(j, "note", t.note);
}

void to_json(json &j, const KernelResources &r)
{
    j = json{{"registers", r.registers},
             {"shared_bytes", r.sharedBytes},
             {"stack_bytes", r.stackBytes},
             {"spill_stores", r.spillStores},
             {"spill_loads", r.spillLoads}};
}

void from_json(const json &j, KernelResources &r)
{
    requireObject(j, "resources");
    r = KernelResources{};
    opt(j, "registers", r.registers);
    opt(j, "shared_bytes", r.sharedBytes);
    opt(j, "stack_bytes", r.stackBytes);
    opt(j, "spill_stores", r.spillStores);
    opt(j, "spill_loads", r.spillLoads);
}

void to_json(json &j, const SanitizerCheck &c)
{
    j = json{{"outcome", c.outcome}, {"tools", c.tools}, {"seconds", number(c.seconds)}, {"note", c.note}};
    if (c.sameAs != 0)
        j["same_as"] = c.sameAs;
}

void from_json(const json &j, SanitizerCheck &c)
{
    requireObject(j, "sanitizer");
    c = SanitizerCheck{};
    opt(j, "outcome", c.outcome);
    opt(j, "tools", c.tools);
    opt(j, "seconds", c.seconds);
    opt(j, "note", c.note);
    opt(j, "same_as", c.sameAs);
}

void to_json(json &j, const EvalResult &r)
{
    j = json{{"verdict", toString(r.verdict)},
             {"reason", r.reason},
             {"precision", toString(r.precision)},
             {"policy", toString(r.policy)},
             {"trials", r.trials},
             {"max_scaled_error", number(r.maxScaledError)},
             {"kernelbench_passed", r.kernelbenchPassed},
             {"floor_ms", number(r.floorMs)},
             {"resources", r.resources},
             {"compile_log", r.compileLog},
             {"compile_seconds", number(r.compileSeconds)},
             {"sanitizer_report", r.sanitizerReport}};
    if (r.timing)
        j["timing"] = *r.timing;
    if (r.sanitizer)
        j["sanitizer"] = *r.sanitizer;
    if (r.seed != 0)
        j["seed"] = r.seed;
    if (r.timingCheck)
        j["timing_check"] = *r.timingCheck;
    if (r.peakGpuBytes > 0)
        j["peak_gpu_bytes"] = r.peakGpuBytes;
}

void from_json(const json &j, EvalResult &r)
{
    requireObject(j, "result");
    r = EvalResult{};
    optEnum(j, "verdict", r.verdict, &parseVerdict, "verdict");
    opt(j, "reason", r.reason);
    optEnum(j, "precision", r.precision, &parsePrecision, "precision");
    optEnum(j, "policy", r.policy, &parsePolicy, "policy");
    opt(j, "trials", r.trials);
    opt(j, "max_scaled_error", r.maxScaledError);
    opt(j, "kernelbench_passed", r.kernelbenchPassed);
    if (auto it = j.find("timing"); it != j.end() && !it->is_null())
        r.timing = it->get<Timing>();
    opt(j, "floor_ms", r.floorMs);
    opt(j, "resources", r.resources);
    opt(j, "compile_log", r.compileLog);
    opt(j, "compile_seconds", r.compileSeconds);
    opt(j, "sanitizer_report", r.sanitizerReport);
    if (auto it = j.find("sanitizer"); it != j.end() && !it->is_null())
        r.sanitizer = it->get<SanitizerCheck>();
    opt(j, "seed", r.seed);
    if (auto it = j.find("timing_check"); it != j.end() && !it->is_null())
        r.timingCheck = it->get<TimingCheck>();
    opt(j, "peak_gpu_bytes", r.peakGpuBytes);
}

void to_json(json &j, const TimingCheck &c)
{
    j = json{{"checked", c.checked},
             {"runs", c.runs},
             {"input_sets", c.inputSets},
             {"worst_scaled_error", number(c.worstScaledError)},
             {"physical_floor_ms", number(c.physicalFloorMs)},
             {"launch_ms", number(c.launchMs)},
             {"floor_note", c.floorNote},
             {"wall_seconds", number(c.wallSeconds)},
             {"check_seconds", number(c.checkSeconds)}};
}

void from_json(const json &j, TimingCheck &c)
{
    requireObject(j, "timing check");
    c = TimingCheck{};
    opt(j, "checked", c.checked);
    opt(j, "runs", c.runs);
    opt(j, "input_sets", c.inputSets);
    opt(j, "worst_scaled_error", c.worstScaledError);
    opt(j, "physical_floor_ms", c.physicalFloorMs);
    opt(j, "launch_ms", c.launchMs);
    opt(j, "floor_note", c.floorNote);
    opt(j, "wall_seconds", c.wallSeconds);
    opt(j, "check_seconds", c.checkSeconds);
}

void to_json(json &j, const TimedRun &t)
{
    j = json{{"verdict", toString(t.verdict)}, {"reason", t.reason}, {"check", t.check}};
    if (t.timing)
        j["timing"] = *t.timing;
}

void from_json(const json &j, TimedRun &t)
{
    requireObject(j, "timed run");
    t = TimedRun{};
    optEnum(j, "verdict", t.verdict, &parseVerdict, "verdict");
    opt(j, "reason", t.reason);
    if (auto it = j.find("check"); it != j.end() && !it->is_null())
        t.check = it->get<TimingCheck>();
    if (auto it = j.find("timing"); it != j.end() && !it->is_null())
        t.timing = it->get<Timing>();
}

// ---- compile ----------------------------------------------------------------------------------

void to_json(json &j, const Diagnostic &d)
{
    j = json{{"line", d.line}, {"severity", d.severity}, {"message", d.message}};
}

void from_json(const json &j, Diagnostic &d)
{
    requireObject(j, "diagnostic");
    d = Diagnostic{};
    opt(j, "line", d.line);
    opt(j, "severity", d.severity);
    opt(j, "message", d.message);
}

void to_json(json &j, const CompileOutput &c)
{
    j = json{{"ok", c.ok},
             {"arch", c.arch},
             {"log", c.log},
             {"diagnostics", c.diagnostics},
             {"ptx", c.ptx},
             {"cubin", base64Encode(c.cubin)},
             {"lowered_names", c.loweredNames},
             {"resources", c.resources},
             {"seconds", number(c.seconds)},
             {"cached", c.cached}};
}

void from_json(const json &j, CompileOutput &c)
{
    requireObject(j, "compile output");
    c = CompileOutput{};
    opt(j, "ok", c.ok);
    opt(j, "arch", c.arch);
    opt(j, "log", c.log);
    opt(j, "diagnostics", c.diagnostics);
    opt(j, "ptx", c.ptx);
    std::string cubin;
    opt(j, "cubin", cubin);
    c.cubin = base64Decode(cubin);
    opt(j, "lowered_names", c.loweredNames);
    opt(j, "resources", c.resources);
    opt(j, "seconds", c.seconds);
    opt(j, "cached", c.cached);
}

} // namespace kf
