#pragma once
// What the built-in generator covers: the aten ops each pattern accepts (for docs and
// `kernelforge-cli coverage --ops`), and, for one problem, its pattern or the op that stops it.
#include "domain/op_graph.h"
#include "problem/problem.h"

#include <string>
#include <vector>

namespace kf::builtin {

struct CoverageGroup {
    std::string pattern;          // "softmax"
    std::vector<std::string> ops; // the aten ops that anchor it or may appear in it
    std::string note;             // the limits, in words
    bool implemented = true;      // false: recognised, but the catalogue has no idea for it yet
};

const std::vector<CoverageGroup> &coverageGroups();

struct ProblemCoverage {
    bool covered = false;  // a catalogue idea applies (on an H200-like GPU)
    std::string pattern;   // the recognised pattern, "" when none
    std::string summary;   // "softmax over dim 1 of x [4096, 65536]"
    std::string stoppedBy; // the op that stops it ("aten::cumsum"), when one does
    std::string reason;    // why it is not covered, in the generator's words
};

// The candidates the built-in generator writes for a problem: for every catalogue idea that
// applies, its first `points` parameter points by the cost model, as complete candidate files.
struct RenderedCandidate {
    std::string idea;   // "reduce_grid"
    std::string params; // "BLOCK=512, BLOCKS_PER_SM=4, UNROLL=4"
    std::string file;   // "reduce_grid.cu", "reduce_grid_2.cu" for the second point
    std::string source;
};
Result<std::vector<RenderedCandidate>> renderCandidates(const std::vector<OpNode> &graph, const Problem &,
                                                        Policy policy, int points = 1, int sms = 132, int major = 9);

// The problem's tensors (shapes with its constants applied), reference source and policy, as
// JSON: what a script needs to build inputs and a reference for the rendered candidates.
nlohmann::json problemJson(const Problem &);

// The coverage of a problem from its op graph (the worker's LoadedProblem::graph), judged for
// `policy` on a Hopper GPU with 132 SMs when no GPU is given.
ProblemCoverage coverageOf(const std::vector<OpNode> &graph, const Problem &, Policy policy, int sms = 132,
                           int major = 9);

} // namespace kf::builtin
