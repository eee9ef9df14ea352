// kernelforge-cli coverage: the aten ops the built-in generator implements, and for each problem
// the pattern it sees or the op that stops it. The op graph comes from a worker, which needs no
// GPU for this (large problems are not run on the CPU; their graph comes without shapes).
#include "commands.h"
#include "eval/worker_client.h"
#include "gen/builtin/coverage.h"
#include "suite_command.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>

namespace fs = std::filesystem;

namespace kf::cli {

namespace {

// DIR/PROBLEM/IDEA.cu for every idea that applies, and DIR/PROBLEM/problem.json.
int writeCandidates(const std::string &dir, const std::vector<OpNode> &graph, const Problem &p, Policy policy,
                    int points, const GpuInfo &gpu)
{
    // For this GPU when the worker has one, else for an H200.
    auto rendered = builtin::renderCandidates(graph, p, policy, std::max(points, 1), gpu.present ? gpu.sms : 132,
                                              gpu.present ? gpu.major : 9);
    if (!rendered) {
        std::fprintf(stderr, "kernelforge-cli: %s\n", rendered.error().text().c_str());
        return BadInput;
    }
    const fs::path folder = fs::path(dir) / p.name;
    std::error_code ec;
    fs::create_directories(folder, ec);
    auto write = [&](const fs::path &file, const std::string &text) {
        std::ofstream f(file, std::ios::binary);
        if (f << text)
            return true;
        std::fprintf(stderr, "kernelforge-cli: cannot write %s\n", file.string().c_str());
        return false;
    };
    if (!write(folder / "problem.json", builtin::problemJson(p).dump(2) + "\n"))
        return BadInput;
    for (const builtin::RenderedCandidate &c : *rendered) {
        if (!write(folder / c.file, c.source))
            return BadInput;
        std::printf("    wrote %s (%s)\n", (folder / c.file).string().c_str(), c.params.c_str());
    }
    return Success;
}

int printOps()
{
    for (const builtin::CoverageGroup &g : builtin::coverageGroups()) {
        std::printf("%s%s: %s\n", g.pattern.c_str(), g.implemented ? "" : " (not implemented)", g.note.c_str());
        std::string line = "   ";
        for (const std::string &op : g.ops) {
            if (line.size() + op.size() > 100) {
                std::printf("%s\n", line.c_str());
                line = "   ";
            }
            line += " " + op;
        }
        if (!g.ops.empty())
            std::printf("%s\n", line.c_str());
    }
    return Success;
}

} // namespace

int cmdCoverage(const Args &a)
{
    if (a.flag("--ops"))
        return printOps();
    if (a.positional.empty()) {
        std::fprintf(stderr, "kernelforge-cli: coverage needs problem files, folders or names (or --ops)\n");
        return BadInput;
    }
    Policy policy = Policy::Strict;
    if (auto p = a.option("--policy")) {
        auto parsed = parsePolicy(*p);
        if (!parsed) {
            std::fprintf(stderr, "kernelforge-cli: --policy is strict or loose, not '%s'\n", p->c_str());
            return BadInput;
        }
        policy = *parsed;
    }
    std::vector<Result<Problem>> problems;
    for (const std::string &arg : a.positional) {
        std::error_code ec;
        if (fs::is_directory(arg, ec)) {
            ProblemListing l = listProblems(arg);
            for (auto &p : l.problems)
                problems.emplace_back(std::move(p));
            for (auto &e : l.errors)
                problems.emplace_back(e);
        } else {
            problems.push_back(findProblem(arg, a.option("--variant").value_or("")));
        }
    }
    const std::optional<std::string> render = a.option("--render");
    WorkerConfig config;
    if (auto w = a.option("--worker"))
        config.argv = splitCommandLine(*w);
    WorkerClient worker(config);
    if (auto started = worker.start(); !started) {
        std::fprintf(stderr, "kernelforge-cli: %s\n", started.error().text().c_str());
        return WorkerFailed;
    }
    int covered = 0, total = 0;
    for (auto &p : problems) {
        ++total;
        if (!p) {
            std::printf("%-32s does not load: %s\n", "?", p.error().text().c_str());
            continue;
        }
        auto loaded = worker.load(*p);
        if (!loaded) {
            std::printf("%-32s does not load: %s\n", p->name.c_str(), loaded.error().text().c_str());
            continue;
        }
        const builtin::ProblemCoverage c = builtin::coverageOf(loaded->graph, *p, policy);
        covered += c.covered;
        if (c.covered)
            std::printf("%-32s covered: %s: %s\n", p->name.c_str(), c.pattern.c_str(), c.summary.c_str());
        else
            std::printf("%-32s not covered%s%s: %s\n", p->name.c_str(), c.stoppedBy.empty() ? "" : ", stopped by ",
                        c.stoppedBy.c_str(), c.reason.c_str());
        if (render && c.covered)
            if (int rc =
                    writeCandidates(*render, loaded->graph, *p, policy, a.intOption("--points", 1), worker.info()->gpu);
                rc != Success)
                return rc;
        // Module problems carry their modules: let each go once it is judged.
        p = makeError(ErrorCode::Done, "");
    }
    std::printf("%d of %d problems covered by the built-in generator\n", covered, total);
    return Success;
}

} // namespace kf::cli
