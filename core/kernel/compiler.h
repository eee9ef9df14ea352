#pragma once
// NVRTC compilation of a candidate for one GPU architecture, with a disk cache keyed by the hash
// of source, options and architecture. NVRTC 13 serialises compiles within a process, so callers
// that want parallel compiles use the compile pool (processes of `kernelforge-worker --compile`).
#include "util/error.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kf {

struct Diagnostic {
    int line = 0; // 1-based line in the candidate, 0 when none
    std::string severity; // "error", "warning"
    std::string message;
};

struct KernelResources {
    int registers = 0;
    int sharedBytes = 0;     // static shared memory
    int stackBytes = 0;
    int spillStores = 0;
    int spillLoads = 0;
};

struct CompileOutput {
    bool ok = false;
    std::string arch;                 // "sm_90a"
    std::string log;                  // NVRTC's program log (ptxas -v lines included)
    std::vector<Diagnostic> diagnostics;
    std::string ptx;
    std::string cubin;                // binary, empty when !ok
    std::map<std::string, std::string> loweredNames; // kernel name as written -> symbol
    std::map<std::string, KernelResources> resources; // by kernel name as written
    double seconds = 0;
    bool cached = false;
};

struct CompileOptions {
    std::string arch = "sm_90a";      // the device's own; chosen by the caller
    std::vector<std::string> extra;   // more NVRTC options
    std::string cacheDir;             // "" = no cache
};

// Default cache folder: $XDG_CACHE_HOME/kernelforge/nvrtc or ~/.cache/kernelforge/nvrtc.
std::string defaultCompileCacheDir();
// The architecture of GPU 0 ("sm_90a" on Hopper), or "" when there is no GPU.
std::string deviceArch();

// The diagnostics in an NVRTC log (as CompileOutput::diagnostics holds them), for a log kept
// without its CompileOutput: a session stores a candidate's compile log in its result.
std::vector<Diagnostic> diagnosticsFromLog(const std::string &log);

// Compiles `source` (a candidate file; its directives are comments) and looks up the kernels named
// in `kernels`. A failed compile is a CompileOutput with ok=false and diagnostics, not an Error;
// an Error means NVRTC itself could not run.
Result<CompileOutput> compileCuda(const std::string &source, const std::vector<std::string> &kernels,
                                  const CompileOptions &options);

} // namespace kf
