#pragma once
// The engine's own GPU kernels for checking candidates (internal to the worker): poison fills,
// the comparison with a reference, the sum of squares behind rms(ref), and a salted hash that
// shows whether a kernel wrote its inputs. They run on the GPU so that checking a multi-GB output
// needs no host copy and no temporaries, and so that every timed run can be checked outside its
// event window at the cost of one pass over the output and the reference.
#include "problem/problem.h"
#include "worker/compiler.h"
#include "worker/runtime.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>

namespace kf::ref {

// What one comparison found; the slot it is read from holds these as 64-bit words.
struct CompareStats {
    double maxScaled = 0;        // max over finite pairs of (|out - ref| - slack |ref|) / (|ref| + rms)
    double maxAbs = 0;           // max |out - ref| over finite pairs
    std::int64_t nonFinite = 0;  // out NaN or infinite where the reference is finite
    std::int64_t mismatched = 0; // integer and boolean outputs: elements that differ
    double kernelbenchRatio = 0; // max |out - eager| / (tol + tol |eager|); 0 without an eager output
};
inline constexpr int kStatsWords = 8; // one slot: the fields above, padded

struct CompareArgs {
    const void *out = nullptr;
    DType outType = DType::F32;
    const void *ref = nullptr;
    bool refIsF64 = true;        // floating outputs: fp64 reference, else fp32; integers: out's type
    const void *eager = nullptr; // KernelBench's check against the eager output (out's type), or null
    std::int64_t numel = 0;
    double rms = 0;
    double slack = 0; // the rounding of a reference kept in fp32, relative to |ref|
    double kernelbenchTol = 1e-2;
};

// Compiles the check kernels without loading them (the compile-only worker's `compile_checks`, so
// that a machine without a GPU can test that they build for an architecture).
Result<CompileOutput> compileCheckKernels(const std::string &arch);

class CheckKernels {
public:
    // Compiles (cached on disk by the compiler) and loads the kernels for the device's architecture.
    static Result<std::unique_ptr<CheckKernels>> load(const std::string &arch);

    // The poison of a dtype: quiet NaN for floats, the lowest value for integers, true for bool.
    // The same bits whether a run is verified or timed, so a kernel cannot tell the two apart.
    Status poison(void *data, std::int64_t numel, DType);
    // Accumulates the sum of squares of the finite values of an fp64 tensor into *acc (device).
    Status sumSquares(const double *data, std::int64_t numel, double *acc);
    // Accumulates into `slot` (kStatsWords zeroed device words).
    Status compare(const CompareArgs &, std::uint64_t *slot);
    // Adds a salted, position-dependent hash of `bytes` bytes into *acc (device).
    Status hash(const void *data, std::int64_t bytes, std::uint64_t salt, std::uint64_t *acc);
    // An empty kernel, to measure what one launch costs on this GPU.
    Status empty();

    static CompareStats read(const std::uint64_t *hostSlot);

private:
    CheckKernels() = default;
    Status run(const std::string &kernel, std::int64_t work, void **args);
    std::unique_ptr<gpu::Module> m_module;
    int m_sms = 1;
    std::map<std::string, int> m_resident; // blocks of each kernel one SM holds at once
};

} // namespace kf::ref
