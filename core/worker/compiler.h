#pragma once
// Inside kernelforge-worker: NVRTC compilation of a candidate for one GPU architecture, with a
// disk cache keyed by the hash of source, options and architecture. NVRTC 13 serialises compiles
// within a process, so callers that want parallel compiles use the compile pool (processes of
// `kernelforge-worker --compile`).
#include "kernel/compile_output.h"
#include "util/error.h"

#include <string>
#include <vector>

namespace kf {

// The architecture of GPU 0 ("sm_90a" on Hopper), or "" when there is no GPU.
std::string deviceArch();

// Compiles `source` (a candidate file; its directives are comments) and looks up the kernels named
// in `kernels`. A failed compile is a CompileOutput with ok=false and diagnostics, not an Error;
// an Error means NVRTC itself could not run.
Result<CompileOutput> compileCuda(const std::string &source, const std::vector<std::string> &kernels,
                                  const CompileOptions &options);

} // namespace kf
