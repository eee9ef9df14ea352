#include "ceilings.h"
#include "eval/protocol.h"
#include "gpu/physical_floor.h"
#include "worker/runtime.h"

#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace kf::ref {

namespace {

double timeMs(const std::function<void()> &f, int reps)
{
    f();
    cudaDeviceSynchronize();
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaEventRecord(a, nullptr);
    for (int i = 0; i < reps; ++i)
        f();
    cudaEventRecord(b, nullptr);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return ms / reps;
}

// The best of three: a ceiling is what the GPU can do, and a moment of other work on it only slows
// a measurement down.
double bestMs(const std::function<void()> &f, int reps)
{
    double best = timeMs(f, reps);
    for (int i = 0; i < 2; ++i)
        best = std::min(best, timeMs(f, reps));
    return best;
}

std::string cachePath(const GpuInfo &g)
{
    std::string base;
    if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x)
        base = x;
    else if (const char *h = std::getenv("HOME"); h && *h)
        base = std::string(h) + "/.cache";
    else
        base = "/tmp";
    std::string name = g.name;
    for (char &c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)))
            c = '_';
    return base + "/kernelforge/ceilings-" + name + ".json";
}

} // namespace

Ceilings measureCeilings(const GpuInfo &g)
{
    Ceilings c;
    if (!g.present)
        return c;
    torch::NoGradGuard noGrad;
    const auto dev = torch::Device(torch::kCUDA, 0);
    {
        // A copy of 1 GiB, many times the L2: bytes read plus bytes written over the time.
        auto src = torch::rand({1 << 28}, torch::TensorOptions().device(dev));
        auto dst = torch::empty_like(src);
        const double ms = bestMs([&] { dst.copy_(src); }, 20);
        c.bandwidthGBs = 2.0 * double(src.nbytes()) / (ms * 1e6);
    }
    const std::int64_t n = 8192;
    for (auto [key, dtype] :
         {std::pair{"fp32", torch::kFloat32}, {"fp16", torch::kFloat16}, {"bf16", torch::kBFloat16}}) {
        auto a = torch::randn({n, n}, torch::TensorOptions().dtype(dtype).device(dev));
        auto b = torch::randn({n, n}, torch::TensorOptions().dtype(dtype).device(dev));
        auto o = torch::empty({n, n}, a.options());
        const double ms = bestMs([&] { torch::mm_out(o, a, b); }, 10);
        c.tflops[key] = 2.0 * double(n) * n * n / (ms * 1e9);
    }
    // TF32 is not measured: switching PyTorch's TF32 flag differs between libtorch versions. Its
    // rate is the datasheet's, scaled by how the measured fp16 rate compares with its datasheet's.
    const gpu::Datasheet d = gpu::datasheetFor(g.name);
    if (d.tflops.count("tf32") && d.tflops.count("fp16") && d.tflops.at("fp16") > 0)
        c.tflops["tf32"] = d.tflops.at("tf32") * c.tflops["fp16"] / d.tflops.at("fp16");
    return c;
}

Ceilings cachedCeilings(const GpuInfo &g)
{
    const std::string path = cachePath(g);
    if (std::ifstream in(path); in) {
        try {
            Ceilings cached = nlohmann::json::parse(in).get<Ceilings>();
            // A cache written before this check may hold a measurement taken beside other work.
            if (gpu::implausibleCeilings(cached, g.name).empty())
                return cached;
        } catch (const std::exception &) {
            // A damaged cache is measured again.
        }
    }
    Ceilings c = measureCeilings(g);
    if (!gpu::implausibleCeilings(c, g.name).empty())
        c = measureCeilings(g); // once more: whatever shared the GPU may have finished
    if (const std::string why = gpu::implausibleCeilings(c, g.name); !why.empty()) {
        // Used for this worker's floors, but not kept: the next worker measures again.
        std::fprintf(stderr,
                     "kernelforge-worker: the GPU's ceilings look measured beside other work (%s); not "
                     "cached, measured again at the next start\n",
                     why.c_str());
        return c;
    }
    if (c.bandwidthGBs > 0) {
        std::error_code ec;
        std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
        const std::string tmp = path + ".tmp";
        if (std::ofstream out(tmp); out) {
            out << nlohmann::json(c).dump(2);
            out.close();
            std::filesystem::rename(tmp, path, ec);
        }
    }
    return c;
}

} // namespace kf::ref
