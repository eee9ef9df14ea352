#pragma once
// Export of a candidate as a standalone .cu file: its kernels, a generated host launcher that
// does the same launches as the engine, and a provenance header.
#include "kernel/candidate.h"
#include "problem/problem.h"
#include "util/error.h"

#include <optional>
#include <string>

namespace kf {

struct ExportInfo {
    std::string gpu;                // "NVIDIA H200"; "" when unknown
    std::string arch = "sm_90a";    // the target of the build line in the header
    std::string precision;          // "" = the candidate's @precision
    std::optional<double> speedup;  // reference time / kernel time
    std::optional<double> maxError; // largest error the verifier measured
    std::string date;               // "" = today (UTC, YYYY-MM-DD)
    // Why the kernel cannot be trusted as verified ("NOT VERIFIED: ..."), set apart at the top
    // of the header; "" for a kernel that passed verification.
    std::string warning;
};

// The generated file defines, with P the problem's name made an identifier:
//   extern "C" size_t kf_P_scratch_bytes(void);
//   extern "C" cudaError_t kf_launch_P(const T* input..., const T* param..., T* output...,
//                                      void* scratch, cudaStream_t stream);
// Sizes are the problem's, fixed at export time.
Result<std::string> exportCandidate(const Candidate &, const Problem &, const ExportInfo &info);

// "kf_launch_softmax": the launcher's symbol for a problem.
std::string exportLauncherName(const Problem &);
// "kf_softmax_scratch_bytes": the symbol of the scratch-size function.
std::string exportScratchBytesName(const Problem &);

} // namespace kf
