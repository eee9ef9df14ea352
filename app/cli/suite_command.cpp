#include "suite_command.h"

#include "commands.h"
#include "eval/process.h"
#include "eval/worker_client.h"
#include "generator_options.h"
#include "search_commands.h"
#include "suite/suite_report.h"
#include "suite/suite_runner.h"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <sys/wait.h>

namespace fs = std::filesystem;

namespace kf::cli {

namespace {

std::atomic<bool> g_stop{false};

extern "C" void onSuiteInterrupt(int)
{
    g_stop = true;
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
}

// tools/compile-baseline.py: KERNELFORGE_TOOLS, the install's share folder, or the source tree.
std::string compileBaselineScript()
{
    std::vector<fs::path> dirs;
    if (const char *env = std::getenv("KERNELFORGE_TOOLS"); env && *env)
        dirs.emplace_back(env);
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec)
        dirs.push_back(exe.parent_path() / ".." / "share" / "kernelforge" / "tools");
#ifdef KF_SOURCE_TOOLS_DIR
    dirs.emplace_back(KF_SOURCE_TOOLS_DIR);
#endif
    for (const fs::path &d : dirs)
        if (fs::is_regular_file(d / "compile-baseline.py", ec))
            return (d / "compile-baseline.py").string();
    return {};
}

// Whether `python` has PyTorch with a GPU, asked once before the problems run.
bool pythonHasCudaTorch(const std::string &python)
{
    ProcessOptions o;
    o.argv = {python, "-c", "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)"};
    Process p;
    if (!p.start(o))
        return false;
    const auto deadline = Clock::now() + std::chrono::seconds(120);
    const bool exited = p.waitForExit(deadline);
    p.kill(); // reaps it: only then is its status known
    return exited && p.waitStatus() && WIFEXITED(*p.waitStatus()) && WEXITSTATUS(*p.waitStatus()) == 0;
}

// torch.compile times come from tools/compile-baseline.py under Python PyTorch; without it (or a
// GPU) the report says why they are missing.
void chooseCompileBaseline(const Args &a, SuiteOptions &o)
{
    const std::string mode = a.option("--torch-compile").value_or("auto");
    if (mode == "off") {
        o.compileNote = "not measured (--torch-compile off)";
        return;
    }
    if (o.settings.compileOnly) {
        o.compileNote = "not measured (compile-only)";
        return;
    }
    const std::string script = compileBaselineScript();
    const char *env = std::getenv("KERNELFORGE_PYTHON");
    const std::string python = env && *env ? env : "python3";
    if (script.empty()) {
        o.compileNote = "not measured (tools/compile-baseline.py not found; set KERNELFORGE_TOOLS)";
        return;
    }
    if (!pythonHasCudaTorch(python)) {
        o.compileNote = "not measured (" + python + " has no PyTorch with a GPU)";
        return;
    }
    o.compileBaseline = {python, script, "--serve"};
}

std::string percent(double v)
{
    char b[32];
    std::snprintf(b, sizeof b, "%.1f %%", 100 * v);
    return b;
}

void printSummary(const SuiteRunner &runner)
{
    const SuiteSummary s = summarize(runner.state());
    std::printf("\n%d problems: %d searched, %d failed, %d not finished\n", s.problems, s.done, s.failed, s.unfinished);
    auto line = [](const char *name, const FastP &f) {
        std::printf("against %s (%d problems): fast_0 %s, fast_1 %s, fast_2 %s, geomean speedup %.2fx over %d\n", name,
                    f.over, percent(f.fast0).c_str(), percent(f.fast1).c_str(), percent(f.fast2).c_str(), f.geomean,
                    f.correct);
    };
    line("eager PyTorch", s.eager);
    if (s.compile.over > 0)
        line("torch.compile", s.compile);
    if (s.measured > 0)
        std::printf("beyond its search budget a problem took %.1f s on average (%d problems)\n", s.overheadMean,
                    s.measured);
    std::printf("report: %s and %s\n", runner.reportPath("md").c_str(), runner.reportPath("json").c_str());
}

} // namespace

const std::set<std::string> &suiteValuedOptions()
{
    static const std::set<std::string> names{"--out", "--budget-per-problem", "--torch-compile"};
    return names;
}

int cmdSuite(const Args &a)
{
    if (a.positional.empty()) {
        std::fprintf(stderr,
                     "kernelforge-cli: suite needs a FOLDER of problem files "
                     "(tools/kernelbench-import.py makes one from KernelBench files)\n");
        return BadInput;
    }
    SuiteOptions o;
    o.folder = a.positional[0];
    o.out = a.option("--out").value_or("suite-" + fs::path(o.folder).lexically_normal().filename().string());
    // Each problem's search runs until its budget: many rounds, so that the budget decides.
    o.settings.rounds = 100;
    o.settings.timeBudgetSeconds = 300;
    if (a.option("--budget")) {
        std::fprintf(stderr, "kernelforge-cli: suite takes --budget-per-problem SECONDS, not --budget\n");
        return BadInput;
    }
    if (!applySearchOptions(a, o.settings))
        return BadInput;
    if (auto b = a.option("--budget-per-problem")) {
        try {
            std::size_t used = 0;
            o.settings.timeBudgetSeconds = std::stod(*b, &used);
            if (used != b->size() || !(o.settings.timeBudgetSeconds > 0))
                throw std::invalid_argument("budget");
        } catch (const std::exception &) {
            std::fprintf(stderr, "kernelforge-cli: --budget-per-problem needs seconds (more than 0), not '%s'\n",
                         b->c_str());
            return BadInput;
        }
    }
    if (auto m = a.option("--torch-compile"); m && *m != "auto" && *m != "off") {
        std::fprintf(stderr, "kernelforge-cli: --torch-compile is auto or off, not '%s'\n", m->c_str());
        return BadInput;
    }
    o.generator = a.option("--generator").value_or("builtin");
    if (!generatorSettings(a, nlohmann::json(), o.generatorSettings))
        return BadInput;
    if (auto w = a.option("--worker"))
        o.pool.worker.argv = splitCommandLine(*w);
    if (!parseGpus(a, o.pool.gpus) || !readInt(a, "--workers-per-gpu", o.pool.workersPerGpu))
        return BadInput;
    o.compiler.argv = a.option("--compiler") ? splitCommandLine(*a.option("--compiler")) : o.pool.worker.argv;
    if (!readInt(a, "--compilers", o.compiler.processes))
        return BadInput;
    o.retryFailed = a.flag("--retry-failed");
    chooseCompileBaseline(a, o);

    SuiteRunner runner(o);
    const auto start = std::chrono::steady_clock::now();
    auto progress = [&](const std::string &problem, const std::string &line) {
        const int t = int(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        std::printf("[%02d:%02d] %s%s%s\n", t / 60, t % 60, problem.c_str(), problem.empty() ? "" : ": ", line.c_str());
        std::fflush(stdout);
    };
    std::printf("suite %s -> %s (%s generator, %g s per problem, GPUs", o.folder.c_str(), o.out.c_str(),
                o.generator.c_str(), o.settings.timeBudgetSeconds);
    for (int g : o.pool.gpus)
        std::printf(" %d", g);
    std::printf("; torch.compile: %s)\n", o.compileBaseline.empty() ? o.compileNote.c_str() : "measured");
    std::fflush(stdout);

    g_stop = false;
    std::signal(SIGINT, onSuiteInterrupt);
    std::signal(SIGTERM, onSuiteInterrupt);
    Status ran = runner.run(g_stop, progress);
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
    if (!ran) {
        std::fprintf(stderr, "kernelforge-cli: %s\n", ran.error().text().c_str());
        if (ran.error().code == ErrorCode::NoGpu)
            std::fprintf(stderr,
                         "kernelforge-cli: the suite needs an NVIDIA GPU; add --compile-only to compile "
                         "candidates without one\n");
        if (!runner.state().problems.empty())
            printSummary(runner);
        return ran.error().code == ErrorCode::Io || ran.error().code == ErrorCode::Suite ||
                ran.error().code == ErrorCode::Generator
            ? int(BadInput)
            : exitFor(ran.error());
    }
    printSummary(runner);
    if (g_stop) {
        std::printf("interrupted: run the same command again to resume\n");
        return Interrupted;
    }
    return Success;
}

} // namespace kf::cli
