#pragma once
// A problem: a PyTorch computation at fixed sizes (see docs/formats.md, "Problem files").
#include "util/error.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kf {

enum class DType { F32, F16, BF16, F64, I32, I64, Bool };
enum class Dist { Uniform, Normal, Laplace, LogNormal, Exponential };
enum class Policy { Strict, Loose };

std::string toString(DType);
std::optional<DType> parseDType(std::string_view);
std::size_t elementSize(DType);
std::string toString(Dist);
std::optional<Dist> parseDist(std::string_view);
std::string toString(Policy);
std::optional<Policy> parsePolicy(std::string_view);
double tolerance(Policy); // 1e-4 strict, 1e-2 loose

struct TensorSpec {
    std::string name;
    std::vector<std::int64_t> shape;
    DType dtype = DType::F32;
    std::int64_t numel() const;
    std::size_t bytes() const { return std::size_t(numel()) * elementSize(dtype); }
};

struct InputSpec : TensorSpec {
    // The problem's own distribution first, then the others of the rotation it allows.
    std::vector<Dist> distributions;
};

struct ParamSpec : TensorSpec {
    // "ones", "zeros", "uniform" (low..high), "normal" (mean, std), "fan_in_uniform"
    // (U(-1/sqrt(fan_in), 1/sqrt(fan_in)), as PyTorch's Conv2d and Linear initialise).
    std::string init = "fan_in_uniform";
    double low = 0, high = 1;
    std::int64_t fanIn = 0;
    // Module problems: the module attribute that holds it ("conv.weight"); the worker passes the
    // module's tensor there as this parameter.
    std::string attribute;
};

struct Problem {
    std::string name;
    std::string description;
    std::string path;    // where it was loaded from ("" when sent by content)
    std::string text;    // the file's text: problems travel to workers by content
    std::string variant; // "" or the name of the size variant applied ("small")
    std::map<std::string, std::int64_t, std::less<>> constants;
    std::vector<InputSpec> inputs;
    std::vector<ParamSpec> params;
    std::vector<TensorSpec> outputs; // "out" or "out0", "out1", ...
    std::string referenceSource;     // TorchScript: def forward(inputs..., params...); for a module
        // problem, the Python it was imported from (for prompts)
    // Module problems (docs/formats.md, "Module problems"): the reference is a saved TorchScript
    // module. `module` holds its bytes, read from beside the file or from a text's [module_data]
    // table. They stay out of `text` and are shared between copies: a model's weights can be
    // hundreds of MB, which base64 in a TOML string made a minute of copying and parsing; they go
    // to a worker as raw bytes after the load request (docs/protocol.md).
    std::string modulePath;                    // reference.module as written in the file ("" otherwise)
    std::shared_ptr<const std::string> module; // the .pt file's bytes; null when not read
    std::string moduleTorch;                   // the PyTorch version that saved it, "" when unknown
    bool isModule() const { return !modulePath.empty(); }
    bool hasModuleBytes() const { return module && !module->empty(); }
    Policy policy = Policy::Strict;
    bool normalization = false;       // adds the large-offset trial (mean 1000, std 0.1)
    std::optional<double> flops;      // declared; else derived from the op graph by the worker
    std::optional<double> bytesMoved; // declared; else inputs + params read once, outputs written once

    double derivedBytes() const;
    double bytes() const { return bytesMoved ? *bytesMoved : derivedBytes(); }
    // Every tensor by name: inputs, params, outputs.
    const TensorSpec *tensor(std::string_view name) const;
};

// Parses a problem file's text. `path` is used in error messages only; `variant` names a
// [variants.NAME] table whose constants override the main ones (small sizes for tests). A module
// problem's text must carry its module ([module_data]) unless `needModule` is false.
Result<Problem> parseProblem(const std::string &text, const std::string &path, const std::string &variant = {},
                             bool needModule = true);
// Reads a problem file; a module problem's module is read from beside it into `module`.
Result<Problem> loadProblemFile(const std::string &path, const std::string &variant = {});
// The problem's text with its module's bytes as a [module_data] table (unless the text has one
// already), which parseProblem reads back whole: for a session that stands on its own.
std::string textWithModule(const Problem &problem);

// Problems found under a folder (recursively, *.toml), sorted by relative path; files that fail
// to parse are returned in `errors` and skipped. Without `readModules`, module problems come
// without their modules (names and shapes only: a folder of imported models can hold gigabytes).
struct ProblemListing {
    std::vector<Problem> problems;
    std::vector<Error> errors;
};
ProblemListing listProblems(const std::string &folder, bool readModules = true);

// Finds a problem by name or path among the shipped folders (KERNELFORGE_PROBLEMS, the install
// prefix, the source tree).
Result<Problem> findProblem(const std::string &nameOrPath, const std::string &variant = {});
std::vector<std::string> problemSearchPath();

} // namespace kf
