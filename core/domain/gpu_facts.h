#pragma once
// What the engine knows of a GPU: its identity and limits, and the ceilings measured on it.
#include <cstdint>
#include <map>
#include <string>

namespace kf {

struct GpuInfo {
    bool present = false;
    std::string reason; // why not, when !present ("no CUDA driver (error 35)")
    std::string name;   // "NVIDIA H200"
    std::string arch;   // "sm_90a"
    int major = 0, minor = 0;
    int sms = 0;
    std::int64_t l2Bytes = 0;
    std::int64_t memoryBytes = 0;
    std::int64_t smemPerBlockOptin = 0;
    std::int64_t smemPerSm = 0; // shared memory of one SM, all its blocks together
};

// The GPU's measured ceilings, cached per GPU name.
struct Ceilings {
    double bandwidthGBs = 0;              // device-to-device copy, bytes read + written
    std::map<std::string, double> tflops; // "fp32", "tf32", "fp16", "bf16" (dense, measured)
};

} // namespace kf
