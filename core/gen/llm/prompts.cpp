#include "gen/llm/prompts.h"

#include "gen/llm/resources.h"
#include "gpu/physical_floor.h"

#include <cstdio>
#include <sstream>

namespace kf::llm {

namespace {

std::string num(const char *format, double v)
{
    char b[64];
    std::snprintf(b, sizeof b, format, v);
    return b;
}

std::string shapeText(const std::vector<std::int64_t> &shape)
{
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

std::string bytesText(double b)
{
    if (b >= 1e9)
        return num("%.2f GB", b / 1e9);
    if (b >= 1e6)
        return num("%.2f MB", b / 1e6);
    if (b >= 1e3)
        return num("%.1f KB", b / 1e3);
    return num("%.0f B", b);
}

// Long texts (compile logs, big kernels) are cut in the middle, where they matter least.
std::string clip(const std::string &s, std::size_t limit)
{
    if (s.size() <= limit)
        return s;
    const std::size_t half = limit / 2;
    return s.substr(0, half) + "\n[... " + std::to_string(s.size() - limit) + " characters left out ...]\n" +
        s.substr(s.size() - half);
}

struct Work {
    double flops = 0, bytes = 0;
};

// FLOPs and bytes as the worker reported them. A size variant keeps the counts its problem file
// declares for the full size, so for a variant they come from the op graph and the tensors.
Work workOf(const GenContext &c)
{
    Work w{c.loaded.flops > 0 ? c.loaded.flops : c.problem.flops.value_or(0),
           c.loaded.bytes > 0 ? c.loaded.bytes : c.problem.bytes()};
    if (!c.problem.variant.empty()) {
        double graph = 0;
        for (const auto &n : c.loaded.graph)
            graph += n.flops;
        w.flops = graph;
        w.bytes = c.problem.derivedBytes();
    }
    return w;
}

double floorFor(const GenContext &c, Precision p)
{
    const Work w = workOf(c);
    return floorMs(w.flops, w.bytes, p, c.ceilings);
}

} // namespace

Result<std::string> fillTemplate(const std::string &text, const PromptValues &values, const std::string &where)
{
    std::string out;
    std::size_t pos = 0;
    while (true) {
        const std::size_t open = text.find("{{", pos);
        if (open == std::string::npos) {
            out.append(text, pos, std::string::npos);
            return out;
        }
        out.append(text, pos, open - pos);
        const std::size_t close = text.find("}}", open + 2);
        if (close == std::string::npos)
            return makeError(ErrorCode::Prompt, "unclosed {{ in the template", where);
        const std::string name = text.substr(open + 2, close - open - 2);
        auto it = values.find(name);
        if (it == values.end())
            return makeError(ErrorCode::Prompt, "the placeholder {{" + name + "}} has no value", where);
        out += it->second;
        pos = close + 2;
    }
}

Result<std::string> renderPrompt(const std::string &name, const PromptValues &values, const std::string &dir)
{
    auto text = readResource("prompts", "KERNELFORGE_PROMPTS", name + ".md", dir);
    if (!text)
        return text.error();
    return fillTemplate(*text, values, name + ".md");
}

std::string problemFacts(const GenContext &c)
{
    const Problem &p = c.problem;
    std::ostringstream o;
    o << "Problem `" << p.name << "`" << (p.variant.empty() ? "" : " (size variant `" + p.variant + "`)") << ": "
      << p.description << "\n\n";
    // A module problem's reference is a KernelBench file: its parameters live in the model, so
    // the prompt says which module attribute each parameter tensor is.
    o << (p.isModule() ? "Reference (a KernelBench-style PyTorch model built with get_init_inputs(), run eagerly on "
                         "get_inputs(); the kernels get its parameters as the tensors listed below):\n\n```python\n"
                       : "Reference (PyTorch, run eagerly; inputs then parameters in this order):\n\n```python\n")
      << p.referenceSource << (p.referenceSource.empty() || p.referenceSource.back() == '\n' ? "" : "\n") << "```\n\n";
    o << "Tensors (contiguous, row-major; names usable in launch directives):\n";
    for (const auto &i : p.inputs)
        o << "- input `" << i.name << "`: " << toString(i.dtype) << " " << shapeText(i.shape) << "\n";
    for (const auto &q : p.params)
        o << "- parameter `" << q.name << "`: " << toString(q.dtype) << " " << shapeText(q.shape)
          << (q.attribute.empty() ? std::string() : " (the model's `self." + q.attribute + "`)") << "\n";
    const auto &outs = c.loaded.outputs.empty() ? p.outputs : c.loaded.outputs;
    for (const auto &t : outs)
        o << "- output `" << t.name << "`: " << toString(t.dtype) << " " << shapeText(t.shape) << "\n";
    if (!p.constants.empty()) {
        o << "\nNamed constants (usable in launch expressions):";
        for (const auto &[k, v] : p.constants)
            o << " `" << k << "` = " << v;
        o << "\n";
    }
    const Work w = workOf(c);
    o << "\nWork: " << num("%.3g", w.flops) << " FLOPs, " << bytesText(w.bytes)
      << " moved at least (each input and parameter read once, each output written once).\n";
    if (!c.ceilings.tflops.empty() || c.ceilings.bandwidthGBs > 0)
        o << "Roofline floor on this GPU: " << num("%.4f ms", floorFor(c, Precision::FP32)) << " in fp32, "
          << num("%.4f ms", floorFor(c, Precision::FP16)) << " in fp16.\n";
    if (c.eager)
        o << "Eager PyTorch takes " << num("%.4f ms", c.eager->medianMs) << " (median).\n";
    o << "Correctness: outputs are checked against an fp64 reference on fresh random inputs (uniform, normal, "
         "Laplace, log-normal, exponential) with tolerance "
      << num("%g", tolerance(c.policy)) << " relative to |ref| + rms(ref) (`" << toString(c.policy)
      << "` policy); every output element must be written.\n";
    return o.str();
}

std::string gpuFacts(const GenContext &c)
{
    const GpuInfo &g = c.gpu;
    std::ostringstream o;
    if (!g.present) {
        o << "No GPU is attached to this search (" << (g.reason.empty() ? "compile-only" : g.reason)
          << "): candidates are compiled for sm_90a (Hopper) and checked on a GPU later.\n";
        return o.str();
    }
    o << g.name << " (" << g.arch << "): " << g.sms << " SMs, " << bytesText(double(g.l2Bytes)) << " L2, "
      << bytesText(double(g.smemPerBlockOptin)) << " shared memory per block (opt-in), "
      << bytesText(double(g.memoryBytes)) << " device memory.\n";
    if (c.ceilings.bandwidthGBs > 0)
        o << "Measured copy bandwidth: " << num("%.0f GB/s", c.ceilings.bandwidthGBs) << ".\n";
    if (!c.ceilings.tflops.empty()) {
        o << "Measured dense matmul rates:";
        for (const auto &[k, v] : c.ceilings.tflops)
            o << " " << k << " " << num("%.0f", v) << " TFLOP/s;";
        o << "\n";
    }
    return o.str();
}

std::string kernelList(const GenContext &c, const std::vector<KernelRecord> &kernels, std::size_t maxSource)
{
    if (kernels.empty())
        return "None yet: no candidate has been verified correct.\n";
    std::ostringstream o;
    const double eager = c.eager ? c.eager->medianMs : 0;
    for (const auto &k : kernels) {
        o << "### Kernel #" << k.node << " (idea: " << k.ideaId << ")\n";
        if (k.result.timing) {
            const double ms = k.result.timing->medianMs;
            o << "Median " << num("%.4f ms", ms);
            if (eager > 0 && ms > 0)
                o << ", " << num("%.2fx", eager / ms) << " eager PyTorch";
            if (k.result.floorMs > 0 && ms > 0)
                o << ", " << num("%.0f%%", 100 * k.result.floorMs / ms) << " of the roofline floor";
            o << "; ";
        }
        o << "precision " << toString(k.result.precision) << ", max scaled error "
          << num("%.2e", k.result.maxScaledError);
        for (const auto &[name, r] : k.result.resources)
            o << "; `" << name << "`: " << r.registers << " registers, " << r.sharedBytes << " B static shared"
              << (r.spillStores + r.spillLoads > 0 ? ", spills " + std::to_string(r.spillStores + r.spillLoads) + " B"
                                                   : std::string());
        o << "\n\n```cuda\n"
          << clip(k.source, maxSource) << (k.source.empty() || k.source.back() == '\n' ? "" : "\n") << "```\n\n";
    }
    return o.str();
}

std::string triedIdeas(const GenContext &c)
{
    if (c.tried.empty())
        return "None yet: this is the first round.\n";
    std::ostringstream o;
    for (const auto &i : c.tried) {
        o << "- round " << i.round << ", \"" << i.title << "\" "
          << (i.parentNode ? "on kernel #" + std::to_string(i.parentNode) : std::string("from the reference")) << ": ";
        if (i.correct > 0)
            o << "best " << num("%.4f ms", i.bestMs) << " (" << i.correct << " correct, " << i.failed << " failed)";
        else if (i.unjudged > 0)
            o << i.unjudged << " compiled, not evaluated yet"
              << (i.failed ? ", " + std::to_string(i.failed) + " failed" : "");
        else if (i.failed > 0)
            o << "failed (" << i.failed << "): " << i.failure;
        else
            o << "no candidate ran";
        o << "\n";
    }
    return o.str();
}

std::string failureFacts(const KernelRecord &k)
{
    const EvalResult &r = k.result;
    std::ostringstream o;
    o << "Verdict: " << toString(r.verdict) << (r.reason.empty() ? "" : " — " + r.reason) << "\n";
    if (!r.compileLog.empty())
        o << "\nCompiler log (NVRTC):\n\n```\n" << clip(r.compileLog, 6000) << "\n```\n";
    if (r.sanitizer && r.sanitizer->outcome == "finding" && !r.sanitizerReport.empty())
        o << "\ncompute-sanitizer's report:\n\n```\n" << clip(r.sanitizerReport, 6000) << "\n```\n";
    bool header = false;
    for (const auto &t : r.trials) {
        if (t.passed)
            continue;
        if (!header) {
            o << "\nFailed trials:\n";
            header = true;
        }
        o << "- trial " << t.index << " (" << t.distribution << " inputs"
          << (t.randomParams ? ", random parameters" : "") << "): max scaled error " << num("%.3e", t.maxScaledError)
          << " against tolerance " << num("%g", t.tolerance) << ", max abs error " << num("%.3e", t.maxAbsError);
        if (t.unwritten > 0)
            o << ", " << t.unwritten << " output elements never written";
        if (t.nonFinite > 0)
            o << ", " << t.nonFinite << " NaN/Inf where the reference is finite";
        if (!t.note.empty())
            o << " (" << t.note << ")";
        o << "\n";
    }
    return o.str();
}

} // namespace kf::llm
