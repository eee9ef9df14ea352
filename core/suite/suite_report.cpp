#include "suite/suite_report.h"

#include <cmath>
#include <cstdio>

namespace kf {

namespace {

// Speedups of 0 mean "no correct kernel"; `denominator` problems are counted in all.
FastP fastP(const std::vector<double> &speedups, int denominator)
{
    FastP f;
    f.over = denominator;
    double logSum = 0;
    for (double s : speedups) {
        if (!(s > 0))
            continue;
        ++f.correct;
        f.faster += s > 1;
        f.faster2 += s > 2;
        logSum += std::log(s);
    }
    if (denominator > 0) {
        f.fast0 = double(f.correct) / denominator;
        f.fast1 = double(f.faster) / denominator;
        f.fast2 = double(f.faster2) / denominator;
    }
    if (f.correct > 0)
        f.geomean = std::exp(logSum / f.correct);
    return f;
}

std::string fmt(const char *format, double v)
{
    char b[64];
    std::snprintf(b, sizeof b, format, v);
    return b;
}

std::string ms(double v) { return v > 0 ? fmt("%.4f", v) : "-"; }
std::string times(double v) { return v > 0 ? fmt("%.2fx", v) : "-"; }
std::string percent(double v) { return fmt("%.1f %%", 100 * v); }

// A table cell: no line breaks, and a '|' would end the cell.
std::string cell(std::string s)
{
    for (char &c : s)
        if (c == '\n' || c == '\r')
            c = ' ';
    std::string out;
    for (char c : s)
        out += c == '|' ? std::string("\\|") : std::string(1, c);
    return out;
}

nlohmann::json fastJson(const FastP &f)
{
    return {{"problems", f.over},       {"correct", f.correct}, {"faster", f.faster}, {"faster_2x", f.faster2},
            {"fast_0", f.fast0},        {"fast_1", f.fast1},    {"fast_2", f.fast2},  {"geomean_speedup", f.geomean},
            {"geomean_over", f.correct}};
}

} // namespace

std::string reportStatus(const SuiteEntry &e)
{
    if (e.status == suite_status::Failed)
        return "failed";
    if (e.status != suite_status::Done)
        return "not finished";
    if (e.isCorrect())
        return "correct";
    return e.reason.rfind("compile only", 0) == 0 ? "compiled only" : "no correct kernel";
}

SuiteSummary summarize(const SuiteState &s)
{
    SuiteSummary out;
    std::vector<double> eager, compile;
    for (const SuiteEntry &e : s.problems) {
        ++out.problems;
        out.done += e.status == suite_status::Done;
        out.failed += e.status == suite_status::Failed;
        out.unfinished += e.status == suite_status::Pending || e.status == suite_status::Running;
        eager.push_back(e.speedup());
        if (e.overheadSeconds > 0) {
            out.overheadMean += e.overheadSeconds;
            ++out.measured;
        }
        if (e.compileMs > 0)
            compile.push_back(e.speedupOverCompile());
    }
    if (out.measured > 0)
        out.overheadMean /= out.measured;
    out.eager = fastP(eager, out.problems);
    out.compile = fastP(compile, int(compile.size()));
    return out;
}

std::string suiteMarkdown(const SuiteState &s)
{
    const SuiteSummary sum = summarize(s);
    std::string o = "# KernelForge suite: " + cell(s.folder) + "\n\n";
    o += "Generator `" + s.generator + "`, " + fmt("%.0f", s.budgetPerProblem) + " s per problem; " +
        std::to_string(sum.problems) + " problems: " + std::to_string(sum.done) + " searched, " +
        std::to_string(sum.failed) + " failed, " + std::to_string(sum.unfinished) + " not finished.\n\n";
    o += "| against | problems | fast_0 (correct) | fast_1 (faster) | fast_2 (2x faster) | geomean speedup |\n";
    o += "| --- | ---: | ---: | ---: | ---: | ---: |\n";
    auto row = [&](const char *name, const FastP &f) {
        o += std::string("| ") + name + " | " + std::to_string(f.over) + " | " + percent(f.fast0) + " (" +
            std::to_string(f.correct) + ") | " + percent(f.fast1) + " (" + std::to_string(f.faster) + ") | " +
            percent(f.fast2) + " (" + std::to_string(f.faster2) + ") | " +
            (f.correct ? times(f.geomean) + " over " + std::to_string(f.correct) : std::string("-")) + " |\n";
    };
    row("eager PyTorch", sum.eager);
    if (sum.compile.over > 0)
        row("torch.compile", sum.compile);
    else
        o += "| torch.compile | 0 | not timed | | | |\n";
    o += "\nfast_p is the fraction of the problems with a correct kernel more than p times faster than the "
         "baseline; the geometric mean is over the problems with a correct kernel.\n\n";
    if (sum.measured > 0)
        o += "Beyond its search budget a problem took " + fmt("%.1f", sum.overheadMean) + " s on average (" +
            std::to_string(sum.measured) +
            " problems: starting and loading the workers, the eager baseline, torch.compile, stopping).\n\n";
    o += "| problem | status | eager ms | best ms | speedup | torch.compile ms | vs compile | policy | precision | "
         "KernelBench check | candidates | search s | why |\n";
    o += "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- | --- | ---: | ---: | --- |\n";
    for (const SuiteEntry &e : s.problems) {
        std::string why = e.status == suite_status::Done && e.isCorrect() ? std::string() : e.reason;
        if (e.compileMs <= 0 && !e.compileNote.empty())
            why += (why.empty() ? "" : "; ") + std::string("torch.compile: ") + e.compileNote;
        o += "| " + cell(e.name.empty() ? e.file : e.name) + " | " + reportStatus(e) + " | " + ms(e.eagerMs) + " | " +
            ms(e.bestMs) + " | " + times(e.speedup()) + " | " + ms(e.compileMs) + " | " +
            times(e.speedupOverCompile()) + " | " + cell(e.policy) + " | " + cell(e.precision) + " | " +
            (e.isCorrect() ? (e.kernelbenchPassed ? "pass" : "fail") : "-") + " | " + std::to_string(e.candidates) +
            " | " + fmt("%.0f", e.seconds) + " | " + cell(why) + " |\n";
    }
    return o;
}

nlohmann::json suiteReportJson(const SuiteState &s)
{
    const SuiteSummary sum = summarize(s);
    nlohmann::json problems = nlohmann::json::array();
    for (const SuiteEntry &e : s.problems) {
        nlohmann::json j = e;
        j["report_status"] = reportStatus(e);
        j["speedup"] = e.speedup();
        j["speedup_over_compile"] = e.speedupOverCompile();
        problems.push_back(std::move(j));
    }
    return {{"folder", s.folder},
            {"generator", s.generator},
            {"budget_per_problem_s", s.budgetPerProblem},
            {"settings", s.settings},
            {"problems_total", sum.problems},
            {"done", sum.done},
            {"failed", sum.failed},
            {"not_finished", sum.unfinished},
            {"overhead_s_mean", sum.overheadMean},
            {"eager", fastJson(sum.eager)},
            {"torch_compile", fastJson(sum.compile)},
            {"problems", problems}};
}

} // namespace kf
