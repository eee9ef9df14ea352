#pragma once
// The CUDA runtime as the worker uses it: device facts, CUBIN modules, launches. Only the runtime
// and NVRTC are linked; driver functions come through cudaGetDriverEntryPointByVersion so every
// binary starts on a machine without libcuda.so.
#include "domain/gpu_facts.h"
#include "gpu/datasheet.h"
#include "kernel/candidate.h"
#include "kernel/compile_output.h"
#include "util/error.h"

#include <cuda_runtime_api.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kf::gpu {

// Facts about device 0 (after CUDA_VISIBLE_DEVICES), or present=false with the reason.
GpuInfo queryGpu();
std::string errorText(cudaError_t);
// Errors after which the CUDA context is unusable for the rest of the process.
bool isSticky(cudaError_t);

struct KernelHandle {
    cudaKernel_t kernel = nullptr;
    std::vector<std::size_t> paramSizes; // from the driver; empty when it cannot say
    KernelResources resources;
};

class Module {
public:
    ~Module();
    Module(const Module &) = delete;
    Module &operator=(const Module &) = delete;

    // Loads a CUBIN and finds each kernel by its lowered name (written name -> symbol).
    static Result<std::unique_ptr<Module>> load(const std::string &cubin,
                                                const std::map<std::string, std::string> &loweredNames);
    const KernelHandle *kernel(const std::string &name) const;
    const std::map<std::string, KernelHandle> &kernels() const { return m_kernels; }

private:
    Module() = default;
    cudaLibrary_t m_library = nullptr;
    std::map<std::string, KernelHandle> m_kernels;
};

// One launch with its arguments already turned into pointers and scalars. Checks the arguments
// against the kernel's parameter sizes where the driver reports them.
struct LaunchValue {
    std::vector<unsigned char> bytes; // the argument's value, sized as passed
};
Status launch(const KernelHandle &, const ResolvedLaunch &, const std::vector<LaunchValue> &args, cudaStream_t stream);

} // namespace kf::gpu
