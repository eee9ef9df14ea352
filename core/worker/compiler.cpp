#include "worker/compiler.h"

#include "util/hash.h"

#include <cuda_runtime.h>
#include <nlohmann/json.hpp>
#include <nvrtc.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;

namespace kf {

namespace {

// The CUDA headers NVRTC needs for cuda_fp16.h, mma.h, cuda/pipeline and cooperative_groups.h.
// The build's toolkit first; CUDA_HOME and /usr/local/cuda when the binary runs elsewhere.
std::string cudaIncludeDir()
{
    std::vector<std::string> candidates;
    std::string built = KF_CUDA_INCLUDE_DIR;
    // CMake may hand over a list ("a;b"); the first entry holds cuda_runtime.h.
    candidates.push_back(built.substr(0, built.find(';')));
    if (const char *home = std::getenv("CUDA_HOME"))
        candidates.push_back(std::string(home) + "/include");
    candidates.push_back("/usr/local/cuda/include");
    for (const auto &dir : candidates) {
        std::error_code ec;
        if (fs::exists(fs::path(dir) / "cuda_runtime.h", ec))
            return dir;
    }
    return candidates.front();
}

std::vector<std::string> nvrtcOptions(const CompileOptions &options)
{
    std::string inc = cudaIncludeDir();
    std::vector<std::string> opts = {
        "--gpu-architecture=" + options.arch,
        "-std=c++17",
        "--ptxas-options=-v", // registers, shared memory and spills come back in the log
        "-lineinfo",          // source lines in profilers and sanitizers
        "-I" + inc,
        "-I" + inc + "/cccl",
    };
    opts.insert(opts.end(), options.extra.begin(), options.extra.end());
    return opts;
}

std::string nvrtcVersionString()
{
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    return std::to_string(major) + "." + std::to_string(minor);
}

std::string cacheKey(const std::string &source, const std::vector<std::string> &kernels,
                     const std::vector<std::string> &opts, const std::string &arch)
{
    // Kernel names are part of the key: the lowered-name table depends on them.
    std::string key = "kf-nvrtc-1\n" + nvrtcVersionString() + "\n" + arch + "\n";
    for (const auto &o : opts)
        key += o + '\n';
    key += "--kernels\n";
    for (const auto &k : kernels)
        key += k + '\n';
    key += "--source\n" + source;
    return contentHash(key);
}

// ---- log parsing ----

int numberBefore(const std::string &line, const std::string &suffix)
{
    std::size_t p = line.find(suffix);
    if (p == std::string::npos)
        return -1;
    std::size_t end = p;
    while (end > 0 && line[end - 1] == ' ')
        --end;
    std::size_t start = end;
    while (start > 0 && std::isdigit(static_cast<unsigned char>(line[start - 1])))
        --start;
    if (start == end)
        return -1;
    return std::stoi(line.substr(start, end - start));
}

// Resources by lowered (mangled) name, from the ptxas -v lines:
//   ptxas info    : Compiling entry function '_Z2k2ILi64EEvPf' for 'sm_90a'
//   ptxas info    : Function properties for _Z2k2ILi64EEvPf
//   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 32 registers, used 1 barriers, 1024 bytes smem
std::map<std::string, KernelResources> parsePtxasLog(const std::string &log)
{
    std::map<std::string, KernelResources> out;
    std::string entry, props;
    std::istringstream in(log);
    std::string line;
    const std::string compiling = "Compiling entry function '", properties = "Function properties for ";
    while (std::getline(in, line)) {
        if (auto p = line.find(compiling); p != std::string::npos) {
            std::size_t s = p + compiling.size();
            entry = line.substr(s, line.find('\'', s) - s);
            out[entry];
        } else if (auto p = line.find(properties); p != std::string::npos) {
            props = line.substr(p + properties.size());
            while (!props.empty() && std::isspace(static_cast<unsigned char>(props.back())))
                props.pop_back();
        } else if (line.find("bytes stack frame") != std::string::npos) {
            // Device functions that were not inlined get these lines too; keep entries only.
            auto it = out.find(props);
            if (it == out.end())
                continue;
            it->second.stackBytes = std::max(0, numberBefore(line, "bytes stack frame"));
            it->second.spillStores = std::max(0, numberBefore(line, "bytes spill stores"));
            it->second.spillLoads = std::max(0, numberBefore(line, "bytes spill loads"));
        } else if (line.find("Used ") != std::string::npos && line.find(" registers") != std::string::npos) {
            auto it = out.find(entry);
            if (it == out.end())
                continue;
            it->second.registers = std::max(0, numberBefore(line, "registers"));
            it->second.sharedBytes = std::max(0, numberBefore(line, "bytes smem"));
        }
    }
    return out;
}

// ---- cache ----

nlohmann::json toJson(const CompileOutput &o)
{
    nlohmann::json diags = nlohmann::json::array();
    for (const auto &d : o.diagnostics)
        diags.push_back({{"line", d.line}, {"severity", d.severity}, {"message", d.message}});
    nlohmann::json res = nlohmann::json::object();
    for (const auto &[name, r] : o.resources)
        res[name] = {{"registers", r.registers},
                     {"sharedBytes", r.sharedBytes},
                     {"stackBytes", r.stackBytes},
                     {"spillStores", r.spillStores},
                     {"spillLoads", r.spillLoads}};
    return {{"ok", o.ok},       {"arch", o.arch},       {"log", o.log},
            {"ptx", o.ptx},     {"diagnostics", diags}, {"loweredNames", o.loweredNames},
            {"resources", res}, {"seconds", o.seconds}};
}

CompileOutput fromJson(const nlohmann::json &j)
{
    CompileOutput o;
    o.ok = j.at("ok").get<bool>();
    o.arch = j.at("arch").get<std::string>();
    o.log = j.at("log").get<std::string>();
    o.ptx = j.at("ptx").get<std::string>();
    for (const auto &d : j.at("diagnostics"))
        o.diagnostics.push_back(Diagnostic{d.at("line").get<int>(), d.at("severity").get<std::string>(),
                                           d.at("message").get<std::string>()});
    o.loweredNames = j.at("loweredNames").get<std::map<std::string, std::string>>();
    for (const auto &[name, r] : j.at("resources").items())
        o.resources[name] =
            KernelResources{r.at("registers").get<int>(), r.at("sharedBytes").get<int>(), r.at("stackBytes").get<int>(),
                            r.at("spillStores").get<int>(), r.at("spillLoads").get<int>()};
    return o;
}

std::optional<std::string> readFile(const fs::path &p)
{
    std::ifstream f(p, std::ios::binary);
    if (!f)
        return std::nullopt;
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// Writes through a temporary file and a rename, so that another process reading the cache
// sees either nothing or the whole file.
void writeAtomically(const fs::path &p, const std::string &data)
{
    static std::atomic<unsigned> counter{0};
    fs::path tmp = p;
    tmp += ".tmp." + std::to_string(::getpid()) + "." +
        std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id())) + "." + std::to_string(counter++);
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        if (!f)
            return;
        f.write(data.data(), std::streamsize(data.size()));
        if (!f) {
            f.close();
            std::error_code ec;
            fs::remove(tmp, ec);
            return;
        }
    }
    std::error_code ec;
    fs::rename(tmp, p, ec);
    if (ec)
        fs::remove(tmp, ec);
}

std::optional<CompileOutput> loadCached(const fs::path &dir, const std::string &key)
{
    // The JSON is written last, so its presence means the entry is complete.
    auto json = readFile(dir / (key + ".json"));
    if (!json)
        return std::nullopt;
    try {
        CompileOutput o = fromJson(nlohmann::json::parse(*json));
        if (o.ok) {
            auto cubin = readFile(dir / (key + ".cubin"));
            if (!cubin || cubin->empty())
                return std::nullopt;
            o.cubin = std::move(*cubin);
        }
        o.cached = true;
        return o;
    } catch (const std::exception &) {
        return std::nullopt; // a damaged entry is a miss; the compile rewrites it
    }
}

void storeCached(const fs::path &dir, const std::string &key, const CompileOutput &o)
{
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (o.ok)
        writeAtomically(dir / (key + ".cubin"), o.cubin);
    writeAtomically(dir / (key + ".json"), toJson(o).dump());
}

std::string programLog(nvrtcProgram prog)
{
    std::size_t size = 0;
    if (nvrtcGetProgramLogSize(prog, &size) != NVRTC_SUCCESS || size == 0)
        return {};
    std::string log(size, '\0');
    nvrtcGetProgramLog(prog, log.data());
    // The log joins the front end's and ptxas's logs with their terminators inside.
    std::erase(log, '\0');
    return log;
}

Error nvrtcError(const char *what, nvrtcResult r)
{
    return makeError(ErrorCode::Compile, std::string(what) + " failed: " + nvrtcGetErrorString(r));
}

Result<CompileOutput> compileUncached(const std::string &source, const std::vector<std::string> &kernels,
                                      const std::vector<std::string> &opts, const std::string &arch)
{
    CompileOutput out;
    out.arch = arch;

    nvrtcProgram prog = nullptr;
    if (auto r = nvrtcCreateProgram(&prog, source.c_str(), kCompiledProgramName, 0, nullptr, nullptr);
        r != NVRTC_SUCCESS)
        return nvrtcError("nvrtcCreateProgram", r);
    struct Destroy {
        nvrtcProgram *p;
        ~Destroy() { nvrtcDestroyProgram(p); }
    } destroy{&prog};

    for (const auto &k : kernels)
        if (auto r = nvrtcAddNameExpression(prog, k.c_str()); r != NVRTC_SUCCESS)
            return nvrtcError("nvrtcAddNameExpression", r);

    std::vector<const char *> argv;
    for (const auto &o : opts)
        argv.push_back(o.c_str());
    nvrtcResult compiled = nvrtcCompileProgram(prog, int(argv.size()), argv.data());
    out.log = programLog(prog);

    out.diagnostics = diagnosticsFromLog(out.log);

    if (compiled != NVRTC_SUCCESS) {
        if (compiled != NVRTC_ERROR_COMPILATION && compiled != NVRTC_ERROR_INVALID_OPTION)
            return nvrtcError("nvrtcCompileProgram", compiled);
        bool anyError = false;
        for (const auto &d : out.diagnostics)
            anyError |= d.severity == "error";
        if (!anyError) {
            // Keep the failure visible even when the log has a shape we do not parse.
            std::string first = out.log.substr(0, out.log.find('\n'));
            out.diagnostics.push_back(Diagnostic{0, "error", first.empty() ? nvrtcGetErrorString(compiled) : first});
        }
        return out;
    }

    std::size_t ptxSize = 0;
    if (nvrtcGetPTXSize(prog, &ptxSize) == NVRTC_SUCCESS && ptxSize > 0) {
        out.ptx.resize(ptxSize);
        nvrtcGetPTX(prog, out.ptx.data());
        while (!out.ptx.empty() && out.ptx.back() == '\0')
            out.ptx.pop_back();
    }
    // No CUBIN for a virtual architecture (compute_90a): NVRTC stops at PTX.
    std::size_t cubinSize = 0;
    if (nvrtcGetCUBINSize(prog, &cubinSize) == NVRTC_SUCCESS && cubinSize > 0) {
        out.cubin.resize(cubinSize);
        nvrtcGetCUBIN(prog, out.cubin.data());
    }

    auto byLowered = parsePtxasLog(out.log);
    out.ok = true;
    for (const auto &k : kernels) {
        const char *lowered = nullptr;
        if (nvrtcGetLoweredName(prog, k.c_str(), &lowered) != NVRTC_SUCCESS || !lowered) {
            out.diagnostics.push_back(Diagnostic{0, "error", "kernel '" + k + "' named in @launch is not defined"});
            out.ok = false;
            continue;
        }
        out.loweredNames[k] = lowered;
        // A name that resolves to a device function or a variable is not a kernel: only
        // __global__ functions become PTX entries.
        std::string entry = std::string(".entry ") + lowered + "(";
        if (out.ptx.find(entry) == std::string::npos) {
            out.diagnostics.push_back(
                Diagnostic{0, "error", "'" + k + "' named in @launch is not a __global__ function"});
            out.ok = false;
            continue;
        }
        if (auto it = byLowered.find(lowered); it != byLowered.end())
            out.resources[k] = it->second;
    }
    if (!out.ok)
        out.cubin.clear();
    return out;
}

} // namespace

std::string deviceArch()
{
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        // 34, 35 and 100 (no driver, old driver, no device) mean there is no usable GPU;
        // clear the sticky error so later calls start clean.
        cudaGetLastError();
        return {};
    }
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
        cudaGetLastError();
        return {};
    }
    // From Hopper on, the arch-specific target ("a") is what enables wgmma, setmaxnreg and the
    // other instructions that a plain sm_90 rejects; the binary runs only on that exact GPU family,
    // which is the one it is compiled for.
    std::string arch = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
    if (prop.major >= 9)
        arch += "a";
    return arch;
}

Result<CompileOutput> compileCuda(const std::string &source, const std::vector<std::string> &kernels,
                                  const CompileOptions &options)
{
    auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };

    // Several launches of one kernel need one name expression.
    std::vector<std::string> unique;
    std::set<std::string> seen;
    for (const auto &k : kernels)
        if (seen.insert(k).second)
            unique.push_back(k);

    std::vector<std::string> opts = nvrtcOptions(options);
    std::string key;
    if (!options.cacheDir.empty()) {
        key = cacheKey(source, unique, opts, options.arch);
        if (auto hit = loadCached(options.cacheDir, key)) {
            hit->seconds = elapsed();
            return *hit;
        }
    }

    auto out = compileUncached(source, unique, opts, options.arch);
    if (!out)
        return out;
    out->seconds = elapsed();
    if (!options.cacheDir.empty())
        storeCached(options.cacheDir, key, *out);
    return out;
}

} // namespace kf
