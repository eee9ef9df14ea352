// kernelforge-cli: the headless front end (see README "Using kernelforge-cli").
#include "args.h"
#include "commands.h"

#include <cstdio>
#include <string>

namespace {

const char *kUsage =
    "usage: kernelforge-cli COMMAND [options]\n"
    "  problems [--json]                          list the shipped problems\n"
    "  show PROBLEM [--variant V]                 a problem's tensors, reference, FLOPs and bytes\n"
    "  baseline PROBLEM [--trials N] [--json]     time eager PyTorch on this GPU\n"
    "  eval PROBLEM CANDIDATE.cu [--policy strict|loose] [--trials N] [--timing-trials N]\n"
    "       [--variant V] [--session FILE] [--json]\n"
    "                                             verify and time a candidate kernel\n"
    "  export PROBLEM CANDIDATE.cu -o FILE.cu [--arch sm_90a] [--speedup X] [--max-error E]\n"
    "                                             write a standalone .cu with a host launcher\n"
    "common: --worker \"COMMAND\" runs the worker through another command (ssh host kernelforge-worker)\n"
    "exit codes: 0 ok, 1 candidate not correct, 2 bad usage or input, 3 no usable GPU, 4 worker failed\n";

} // namespace

int main(int argc, char **argv)
{
    using namespace kf::cli;
    Args args;
    const std::string err = parseArgs(argc, argv,
                                      {"--policy", "--trials", "--timing-trials", "--variant", "--session", "--output",
                                       "--worker", "--arch", "--speedup", "--max-error"},
                                      args);
    if (!err.empty()) {
        std::fprintf(stderr, "kernelforge-cli: %s\n%s", err.c_str(), kUsage);
        return BadInput;
    }
    if (args.command.empty() || args.command == "help" || args.flag("--help")) {
        std::fputs(kUsage, args.command.empty() && !args.flag("--help") ? stderr : stdout);
        return args.command.empty() && !args.flag("--help") ? BadInput : Success;
    }
    if (args.command == "problems") return cmdProblems(args);
    if (args.command == "show") return cmdShow(args);
    if (args.command == "baseline") return cmdBaseline(args);
    if (args.command == "eval") return cmdEval(args);
    if (args.command == "export") return cmdExport(args);
    std::fprintf(stderr, "kernelforge-cli: unknown command '%s'\n%s", args.command.c_str(), kUsage);
    return BadInput;
}
