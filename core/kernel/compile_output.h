#pragma once
// What a compile of a candidate produced, as the worker sends it and a session keeps it: the
// compiler itself (NVRTC) runs only inside kernelforge-worker (worker/compiler.h).
#include <map>
#include <string>
#include <vector>

namespace kf {

struct Diagnostic {
    int line = 0;         // 1-based line in the candidate, 0 when none
    std::string severity; // "error", "warning"
    std::string message;
};

struct KernelResources {
    int registers = 0;
    int sharedBytes = 0; // static shared memory
    int stackBytes = 0;
    int spillStores = 0;
    int spillLoads = 0;
};

struct CompileOutput {
    bool ok = false;
    std::string arch; // "sm_90a"
    std::string log;  // NVRTC's program log (ptxas -v lines included)
    std::vector<Diagnostic> diagnostics;
    std::string ptx;
    std::string cubin;                                // binary, empty when !ok
    std::map<std::string, std::string> loweredNames;  // kernel name as written -> symbol
    std::map<std::string, KernelResources> resources; // by kernel name as written
    double seconds = 0;
    bool cached = false;
};

struct CompileOptions {
    std::string arch = "sm_90a";    // the device's own; chosen by the caller
    std::vector<std::string> extra; // more NVRTC options
    std::string cacheDir;           // "" = no cache
};

// Default cache folder: $XDG_CACHE_HOME/kernelforge/nvrtc or ~/.cache/kernelforge/nvrtc.
std::string defaultCompileCacheDir();

// The diagnostics in an NVRTC log (as CompileOutput::diagnostics holds them), for a log kept
// without its CompileOutput: a session stores a candidate's compile log in its result.
std::vector<Diagnostic> diagnosticsFromLog(const std::string &log);

// The name NVRTC gives the candidate's program: it prints it in front of every diagnostic
// ("candidate.cu(12): error").
inline constexpr const char *kCompiledProgramName = "candidate.cu";

} // namespace kf
