#include "worker/runtime.h"

#include <cstring>

namespace kf::gpu {

std::string errorText(cudaError_t e)
{
    return std::string(cudaGetErrorName(e)) + " (" + std::to_string(int(e)) + "): " + cudaGetErrorString(e);
}

bool isSticky(cudaError_t e)
{
    switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorMisalignedAddress:
    case cudaErrorIllegalInstruction:
    case cudaErrorInvalidPc:
    case cudaErrorHardwareStackError:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorTooManyPeers:
    case cudaErrorECCUncorrectable:
    case cudaErrorContextIsDestroyed:
        return true;
    default:
        return false;
    }
}

GpuInfo queryGpu()
{
    GpuInfo info;
    int count = 0;
    const cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        // 34 (stub library), 35 (driver too old or none) and 100 (no device) all mean: no usable GPU.
        info.reason = e == cudaSuccess ? "no CUDA device is visible" : "no usable NVIDIA GPU: " + errorText(e);
        cudaGetLastError();
        return info;
    }
    cudaDeviceProp p{};
    if (const cudaError_t pe = cudaGetDeviceProperties(&p, 0); pe != cudaSuccess) {
        info.reason = "cannot read the device's properties: " + errorText(pe);
        return info;
    }
    info.present = true;
    info.name = p.name;
    info.major = p.major;
    info.minor = p.minor;
    // The "a" targets carry the architecture-specific instructions (wgmma on Hopper).
    const bool specific = p.major >= 9;
    info.arch = "sm_" + std::to_string(p.major) + std::to_string(p.minor) + (specific ? "a" : "");
    info.sms = p.multiProcessorCount;
    info.l2Bytes = p.l2CacheSize;
    info.memoryBytes = static_cast<std::int64_t>(p.totalGlobalMem);
    info.smemPerBlockOptin = static_cast<std::int64_t>(p.sharedMemPerBlockOptin);
    info.smemPerSm = static_cast<std::int64_t>(p.sharedMemPerMultiprocessor);
    return info;
}

Module::~Module()
{
    if (m_library)
        cudaLibraryUnload(m_library);
}

Result<std::unique_ptr<Module>> Module::load(const std::string &cubin,
                                             const std::map<std::string, std::string> &loweredNames)
{
    std::unique_ptr<Module> m(new Module);
    cudaError_t e = cudaLibraryLoadData(&m->m_library, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
    if (e != cudaSuccess)
        return makeError(isSticky(e) ? ErrorCode::Fatal : ErrorCode::Load,
                         "cannot load the compiled module: " + errorText(e));
    for (const auto &[written, symbol] : loweredNames) {
        KernelHandle h;
        e = cudaLibraryGetKernel(&h.kernel, m->m_library, symbol.c_str());
        if (e != cudaSuccess)
            return makeError(ErrorCode::Launch,
                             "kernel '" + written + "' is not in the compiled module: " + errorText(e));
        cudaFuncAttributes a{};
        if (cudaFuncGetAttributes(&a, reinterpret_cast<const void *>(h.kernel)) == cudaSuccess) {
            h.resources.registers = a.numRegs;
            h.resources.sharedBytes = static_cast<int>(a.sharedSizeBytes);
            h.resources.stackBytes = static_cast<int>(a.localSizeBytes);
        }
        for (std::size_t i = 0;; ++i) {
            std::size_t offset = 0, size = 0;
            if (cudaFuncGetParamInfo(reinterpret_cast<const void *>(h.kernel), i, &offset, &size) != cudaSuccess)
                break;
            h.paramSizes.push_back(size);
        }
        cudaGetLastError(); // the probe past the last parameter leaves an error behind
        m->m_kernels.emplace(written, std::move(h));
    }
    return m;
}

const KernelHandle *Module::kernel(const std::string &name) const
{
    auto it = m_kernels.find(name);
    return it == m_kernels.end() ? nullptr : &it->second;
}

Status launch(const KernelHandle &k, const ResolvedLaunch &l, const std::vector<LaunchValue> &args, cudaStream_t stream)
{
    if (!k.paramSizes.empty() || args.empty()) {
        if (k.paramSizes.size() != args.size())
            return makeError(ErrorCode::Launch,
                             "kernel '" + l.kernel + "' takes " + std::to_string(k.paramSizes.size()) +
                                 " parameters but @launch passes " + std::to_string(args.size()));
        for (std::size_t i = 0; i < args.size(); ++i)
            if (k.paramSizes[i] != args[i].bytes.size())
                return makeError(ErrorCode::Launch,
                                 "kernel '" + l.kernel + "' parameter " + std::to_string(i + 1) + " is " +
                                     std::to_string(k.paramSizes[i]) + " bytes but @launch passes " +
                                     std::to_string(args[i].bytes.size()) + " bytes");
    }
    std::vector<void *> ptrs;
    ptrs.reserve(args.size());
    for (const LaunchValue &v : args)
        ptrs.push_back(const_cast<unsigned char *>(v.bytes.data()));

    const void *fn = reinterpret_cast<const void *>(k.kernel);
    if (l.smem > 48 * 1024) {
        if (cudaError_t e = cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, int(l.smem));
            e != cudaSuccess)
            return makeError(ErrorCode::Launch,
                             "kernel '" + l.kernel + "' asks for " + std::to_string(l.smem) +
                                 " bytes of shared memory: " + errorText(e));
    }
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(unsigned(l.grid[0]), unsigned(l.grid[1]), unsigned(l.grid[2]));
    cfg.blockDim = dim3(unsigned(l.block[0]), unsigned(l.block[1]), unsigned(l.block[2]));
    cfg.dynamicSmemBytes = std::size_t(l.smem);
    cfg.stream = stream;
    cudaLaunchAttribute attr{};
    if (l.cluster) {
        attr.id = cudaLaunchAttributeClusterDimension;
        attr.val.clusterDim.x = unsigned((*l.cluster)[0]);
        attr.val.clusterDim.y = unsigned((*l.cluster)[1]);
        attr.val.clusterDim.z = unsigned((*l.cluster)[2]);
        cfg.attrs = &attr;
        cfg.numAttrs = 1;
    }
    cudaError_t e = cudaLaunchKernelExC(&cfg, fn, ptrs.data());
    if (e == cudaSuccess)
        e = cudaGetLastError();
    if (e != cudaSuccess)
        return makeError(isSticky(e) ? ErrorCode::Fatal : ErrorCode::Launch,
                         "launch of '" + l.kernel + "' failed: " + errorText(e));
    return Ok{};
}

} // namespace kf::gpu
