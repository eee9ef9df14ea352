#pragma once
// The worker protocol: one JSON object a line over stdin/stdout (docs/protocol.md).
// The JSON forms of the domain values that travel (core/domain) and the handshake; both the
// worker and the client use them.
#include "domain/evaluation.h"
#include "domain/gpu_facts.h"
#include "domain/op_graph.h"
#include "kernel/compile_output.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kf {

inline constexpr int kProtocolVersion = 1;

struct Hello {
    int protocol = kProtocolVersion;
    std::string worker;  // worker version
    std::string torch;   // libtorch version ("" in compile-only mode)
    int cudaRuntime = 0; // cudaRuntimeGetVersion
    int cudaDriver = 0;
    GpuInfo gpu;
};

void to_json(nlohmann::json &, const GpuInfo &);
void from_json(const nlohmann::json &, GpuInfo &);
void to_json(nlohmann::json &, const Hello &);
void from_json(const nlohmann::json &, Hello &);
void to_json(nlohmann::json &, const Ceilings &);
void from_json(const nlohmann::json &, Ceilings &);
void to_json(nlohmann::json &, const Timing &);
void from_json(const nlohmann::json &, Timing &);
void to_json(nlohmann::json &, const OpNode &);
void from_json(const nlohmann::json &, OpNode &);
void to_json(nlohmann::json &, const TensorSpec &);
void from_json(const nlohmann::json &, TensorSpec &);
void to_json(nlohmann::json &, const LoadedProblem &);
void from_json(const nlohmann::json &, LoadedProblem &);
void to_json(nlohmann::json &, const TrialResult &);
void from_json(const nlohmann::json &, TrialResult &);
void to_json(nlohmann::json &, const SanitizerCheck &);
void from_json(const nlohmann::json &, SanitizerCheck &);
void to_json(nlohmann::json &, const TimingCheck &);
void from_json(const nlohmann::json &, TimingCheck &);
void to_json(nlohmann::json &, const TimedRun &);
void from_json(const nlohmann::json &, TimedRun &);
void to_json(nlohmann::json &, const EvalResult &);
void from_json(const nlohmann::json &, EvalResult &);
void to_json(nlohmann::json &, const KernelResources &);
void from_json(const nlohmann::json &, KernelResources &);
void to_json(nlohmann::json &, const Diagnostic &);
void from_json(const nlohmann::json &, Diagnostic &);
void to_json(nlohmann::json &, const CompileOutput &); // cubin as base64
void from_json(const nlohmann::json &, CompileOutput &);

} // namespace kf
