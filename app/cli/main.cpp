// kernelforge-cli: the headless front end (see README "Using kernelforge-cli").
#include "args.h"
#include "commands.h"
#include "generator_options.h"
#include "search_commands.h"
#include "suite_command.h"

#include <cstdio>
#include <string>

namespace {

const char *kUsage =
    "usage: kernelforge-cli COMMAND [options]\n"
    "  problems [--json]                          list the shipped problems\n"
    "  show PROBLEM [--variant V]                 a problem's tensors, reference, FLOPs and bytes\n"
    "  show SESSION NODE                          a candidate of a session: verdict, trials, time, sanitizer report\n"
    "  baseline PROBLEM [--trials N] [--json]     time eager PyTorch on this GPU\n"
    "  eval PROBLEM CANDIDATE.cu [--policy strict|loose] [--trials N] [--timing-trials N]\n"
    "       [--variant V] [--session FILE] [--seed N] [--json]\n"
    "                                             verify and time a candidate kernel (every timed run checked)\n"
    "  eval SESSION.kfsession NODE [--seed N]     evaluate a session's candidate again on the inputs it was\n"
    "                                             judged on (its recorded seed), or on those of --seed\n"
    "  export PROBLEM CANDIDATE.cu -o FILE.cu [--arch sm_90a] [--speedup X] [--max-error E]\n"
    "                                             write a standalone .cu with a host launcher\n"
    "  search PROBLEM --session FILE [--resume] [--rounds N] [--ideas N] [--impls N] [--top-k N]\n"
    "       [--bank N] [--policy strict|loose] [--trials N] [--timing-trials N] [--budget SECONDS]\n"
    "       [--repairs N] [--generator builtin|openai|anthropic] [--variant V] [--gpus 0,1] [--workers-per-gpu N]\n"
    "       [--compiler \"COMMAND\"] [--compilers N] [--compile-only] [--no-sanitize|--sanitize]\n"
    "       [--token-budget N] [--cost-budget X]\n"
    "       LLM generators (--generator openai|anthropic): --base-url URL --model NAME [--key-env VAR]\n"
    "       [--temperature T] [--max-tokens N] [--max-tokens-field max_tokens|max_completion_tokens]\n"
    "       [--reasoning-effort E] [--thinking adaptive|enabled|disabled] [--thinking-budget N] [--stream on|off]\n"
    "       [--concurrency N] [--timeout SECONDS] [--max-time SECONDS] [--connect-timeout SECONDS]\n"
    "       [--retries N] [--prices FILE] [--prompts DIR]\n"
    "                                             search for fast kernels, one line per event;\n"
    "                                             Ctrl-C stops and keeps the session; --resume continues it\n"
    "  report FILE [--csv] [-o FILE]              a session's trajectory: round, best ms, % of reference, idea\n"
    "  suite FOLDER [--out DIR] [--budget-per-problem SECONDS] [--generator G] [--gpus 0,1] [--retry-failed]\n"
    "       [--torch-compile auto|off] [--compile-only] [the search options above]\n"
    "                                             search every problem of a folder, in parallel across GPUs;\n"
    "                                             writes DIR/report.md and report.json (fast_0/1/2, geomean);\n"
    "                                             the same command again resumes an interrupted run\n"
    "  coverage PROBLEM|FOLDER... [--policy P] [--variant V] [--render DIR [--points N]]\n"
    "                                             the built-in generator's pattern for each problem, or the op\n"
    "                                             that stops it; --render writes the candidates of every idea\n"
    "                                             that applies (its first N points, default 1) and problem.json\n"
    "                                             under DIR/PROBLEM/; coverage --ops lists the ops it implements\n"
    "  exchanges FILE [NODE]                      the prompts and answers of a session's LLM requests\n"
    "  models --generator openai|anthropic --base-url URL [--key-env VAR]\n"
    "                                             the models a server offers\n"
    "common: --worker \"COMMAND\" runs the worker through another command (ssh host kernelforge-worker)\n"
    "exit codes: 0 ok, 1 candidate not correct, 2 bad usage or input, 3 no usable GPU, 4 worker failed,\n"
    "            5 the language model's server failed,\n"
    "            130 search interrupted (the session keeps every finished result)\n";

} // namespace

int main(int argc, char **argv)
{
    using namespace kf::cli;
    Args args;
    std::set<std::string> valued{"--policy", "--trials", "--timing-trials", "--variant", "--session",
                                 "--output", "--worker", "--arch",          "--speedup", "--max-error",
                                 "--seed",   "--render", "--points"};
    valued.insert(searchValuedOptions().begin(), searchValuedOptions().end());
    valued.insert(generatorValuedOptions().begin(), generatorValuedOptions().end());
    valued.insert(suiteValuedOptions().begin(), suiteValuedOptions().end());
    const std::string err = parseArgs(argc, argv, valued, args);
    if (!err.empty()) {
        std::fprintf(stderr, "kernelforge-cli: %s\n%s", err.c_str(), kUsage);
        return BadInput;
    }
    if (args.command.empty() || args.command == "help" || args.flag("--help")) {
        std::fputs(kUsage, args.command.empty() && !args.flag("--help") ? stderr : stdout);
        return args.command.empty() && !args.flag("--help") ? BadInput : Success;
    }
    if (args.command == "problems")
        return cmdProblems(args);
    if (args.command == "show")
        return cmdShow(args);
    if (args.command == "baseline")
        return cmdBaseline(args);
    if (args.command == "eval")
        return cmdEval(args);
    if (args.command == "export")
        return cmdExport(args);
    if (args.command == "search")
        return cmdSearch(args);
    if (args.command == "report")
        return cmdReport(args);
    if (args.command == "suite")
        return cmdSuite(args);
    if (args.command == "coverage")
        return cmdCoverage(args);
    if (args.command == "exchanges")
        return cmdExchanges(args);
    if (args.command == "models")
        return cmdModels(args);
    std::fprintf(stderr, "kernelforge-cli: unknown command '%s'\n%s", args.command.c_str(), kUsage);
    return BadInput;
}
