#pragma once
// A candidate: CUDA device code plus launch directives in comments (docs/formats.md).
#include "problem/problem.h"
#include "util/error.h"
#include "util/expr.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kf {

enum class Precision { FP32, TF32x3, TF32, FP16, BF16, BF16x3 };
std::string toString(Precision);
std::optional<Precision> parsePrecision(std::string_view);

struct LaunchArg {
    enum class Kind { Tensor, Scratch, Int32, Int64, Float32 };
    Kind kind = Kind::Tensor;
    std::string text; // tensor or scratch name, or the integer expression
};

struct ScratchDecl {
    std::string name;
    DType dtype = DType::F32;
    std::string countExpr; // number of elements
    int line = 0;
    // Zero-filled before each launch sequence unless declared `uninitialized` (a buffer the kernels
    // write in full before reading: the fill would only cost time).
    bool zeroed = true;
};

struct LaunchDecl {
    std::string kernel;
    std::array<std::string, 3> grid{"1", "1", "1"};
    std::array<std::string, 3> block{"1", "1", "1"};
    std::string smem = "0";                            // dynamic shared memory, bytes
    std::optional<std::array<std::string, 3>> cluster; // thread-block cluster dims (Hopper)
    std::vector<LaunchArg> args;
    int line = 0;
};

struct Candidate {
    std::string source; // the whole file, directives included: what the editor shows
    Precision precision = Precision::FP32;
    std::vector<ScratchDecl> scratch;
    std::vector<LaunchDecl> launches;
    std::string problem; // @problem: the problem the file was written for (informational)
    std::string expect;  // @expect: the verdict its author expects (the kernel test suite checks it)
};

// Parses the directives. Errors name the line ("candidate.cu:4: @launch: missing block(...)").
Result<Candidate> parseCandidate(const std::string &source, const std::string &path = "candidate.cu");

// Checks every name in the directives against the problem (tensors, constants, scratch).
Status checkCandidate(const Candidate &, const Problem &, const std::string &path = "candidate.cu");
// The kernels its launches name, each once, in launch order (what NVRTC must find).
std::vector<std::string> kernelNames(const Candidate &);

// The environment for launch expressions: problem constants and the shapes of every tensor.
ExprEnv launchEnv(const Problem &);

// Launches with every expression evaluated.
struct ResolvedArg {
    LaunchArg::Kind kind;
    std::string name; // tensor or scratch name (pointer kinds)
    std::int64_t ivalue = 0;
    double fvalue = 0;
};
struct ResolvedLaunch {
    std::string kernel;
    std::array<std::int64_t, 3> grid{1, 1, 1};
    std::array<std::int64_t, 3> block{1, 1, 1};
    std::int64_t smem = 0;
    std::optional<std::array<std::int64_t, 3>> cluster;
    std::vector<ResolvedArg> args;
};
struct ResolvedScratch {
    std::string name;
    DType dtype;
    std::int64_t count;
    bool zeroed = true;
};
struct ResolvedPlan {
    std::vector<ResolvedScratch> scratch;
    std::vector<ResolvedLaunch> launches;
};
Result<ResolvedPlan> resolveCandidate(const Candidate &, const Problem &, const std::string &path = "candidate.cu");

} // namespace kf
