#include "check_kernels.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

namespace kf::ref {

namespace {

// No CUDA headers: the module compiles in well under a second and is cached after the first time.
// Every kernel is a grid-stride loop over 64-bit indices (tensors pass 2^31 elements), and each
// warp folds its findings into the slot with one atomic per field.
constexpr const char *kSource = R"CUDA(
typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned short u16;
typedef unsigned char u8;

__device__ __forceinline__ double as_double(float v) { return (double)v; }
__device__ __forceinline__ double as_double(double v) { return v; }
struct h16 { u16 b; };
struct b16 { u16 b; };
__device__ __forceinline__ double as_double(h16 v) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v.b)); return (double)f; }
__device__ __forceinline__ double as_double(b16 v) { return (double)__int_as_float(((u32)v.b) << 16); }
__device__ __forceinline__ bool is_fin(double v) { return v - v == 0.0; }

__device__ __forceinline__ double warp_max(double v) {
    for (int o = 16; o > 0; o >>= 1) v = fmax(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
__device__ __forceinline__ u64 warp_sum(u64 v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ double warp_sumd(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
// Non-negative doubles order as their bit patterns do, so a 64-bit integer max is a double max.
__device__ __forceinline__ void put_max(u64 *p, double v) {
    if (v > 0.0) atomicMax(p, (u64)__double_as_longlong(v));
}

// slot: [0] max scaled error, [1] max abs error, [2] non-finite, [3] mismatched, [4] KernelBench ratio
template <typename O, typename R>
__device__ void compare_floats(const O *out, const R *ref, const O *eager, long long n, double rms, double slack, double kb, u64 *slot) {
    double maxScaled = 0.0, maxAbs = 0.0, kbRatio = 0.0;
    u64 nonFinite = 0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const double o = as_double(out[i]);
        const double r = as_double(ref[i]);
        if (is_fin(r)) {
            if (!is_fin(o)) {
                ++nonFinite;
            } else {
                const double d = fabs(o - r);
                maxAbs = fmax(maxAbs, d);
                maxScaled = fmax(maxScaled, fmax(d - slack * fabs(r), 0.0) / (fabs(r) + rms + 2.2250738585072014e-308));
            }
        }
        if (eager) {
            const double e = as_double(eager[i]);
            if (!(o == e)) {
                const double q = fabs(o - e) / (kb + kb * fabs(e));
                kbRatio = fmax(kbRatio, q == q && q <= 1.79e308 ? q : 1e300);
            }
        }
    }
    maxScaled = warp_max(maxScaled);
    maxAbs = warp_max(maxAbs);
    kbRatio = warp_max(kbRatio);
    nonFinite = warp_sum(nonFinite);
    if ((threadIdx.x & 31) == 0) {
        put_max(slot + 0, maxScaled);
        put_max(slot + 1, maxAbs);
        if (nonFinite) atomicAdd(slot + 2, nonFinite);
        put_max(slot + 4, kbRatio);
    }
}

template <typename T>
__device__ void compare_exact(const T *out, const T *ref, const T *eager, long long n, u64 *slot) {
    u64 mismatched = 0;
    double kbRatio = 0.0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        mismatched += out[i] != ref[i];
        if (eager && out[i] != eager[i]) kbRatio = 1e300;
    }
    mismatched = warp_sum(mismatched);
    kbRatio = warp_max(kbRatio);
    if ((threadIdx.x & 31) == 0) {
        if (mismatched) atomicAdd(slot + 3, mismatched);
        put_max(slot + 4, kbRatio);
    }
}

#define CMP_FLOAT(NAME, O, R) \
extern "C" __global__ void kf_cmp_##NAME(const O *out, const R *ref, const O *eager, long long n, double rms, \
                                         double slack, double kb, u64 *slot) { \
    compare_floats<O, R>(out, ref, eager, n, rms, slack, kb, slot); }
CMP_FLOAT(f32_f64, float, double)
CMP_FLOAT(f32_f32, float, float)
CMP_FLOAT(f16_f64, h16, double)
CMP_FLOAT(f16_f32, h16, float)
CMP_FLOAT(bf16_f64, b16, double)
CMP_FLOAT(bf16_f32, b16, float)
CMP_FLOAT(f64_f64, double, double)
CMP_FLOAT(f64_f32, double, float)

#define CMP_EXACT(NAME, T) \
extern "C" __global__ void kf_cmp_##NAME(const T *out, const T *ref, const T *eager, long long n, double rms, \
                                         double slack, double kb, u64 *slot) { \
    compare_exact<T>(out, ref, eager, n, slot); }
CMP_EXACT(i32, int)
CMP_EXACT(i64, long long)
CMP_EXACT(u8, unsigned char)

#define FILL(NAME, T) \
extern "C" __global__ void kf_fill_##NAME(T *p, long long n, T v) { \
    const long long stride = (long long)gridDim.x * blockDim.x; \
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) p[i] = v; }
FILL(u8, u8)
FILL(u16, u16)
FILL(u32, u32)
FILL(u64, u64)

extern "C" __global__ void kf_sumsq(const double *p, long long n, double *acc) {
    double s = 0.0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        if (is_fin(p[i])) s += p[i] * p[i];
    s = warp_sumd(s);
    if ((threadIdx.x & 31) == 0 && s != 0.0) atomicAdd(acc, s);
}

__device__ __forceinline__ u64 mix(u64 z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
// Words are mixed with their position and a salt the kernel under test never sees, and summed:
// the order of the sum does not matter, and no change to the bytes keeps the sum by accident.
extern "C" __global__ void kf_hash(const u32 *w, long long words, const u8 *tail, int tailBytes, u64 salt, u64 *acc) {
    u64 h = 0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < words; i += stride)
        h += mix(((u64)w[i] << 32) ^ mix((u64)i + salt));
    if (blockIdx.x == 0 && threadIdx.x == 0)
        for (int b = 0; b < tailBytes; ++b) h += mix(((u64)tail[b] << 40) ^ mix(~(u64)b + salt));
    h = warp_sum(h);
    if ((threadIdx.x & 31) == 0) atomicAdd(acc, h);
}

extern "C" __global__ void kf_empty() {}
)CUDA";

constexpr int kThreads = 256;

const char *compareKernel(DType out, bool refIsF64)
{
    switch (out) {
    case DType::F32: return refIsF64 ? "kf_cmp_f32_f64" : "kf_cmp_f32_f32";
    case DType::F16: return refIsF64 ? "kf_cmp_f16_f64" : "kf_cmp_f16_f32";
    case DType::BF16: return refIsF64 ? "kf_cmp_bf16_f64" : "kf_cmp_bf16_f32";
    case DType::F64: return refIsF64 ? "kf_cmp_f64_f64" : "kf_cmp_f64_f32";
    case DType::I32: return "kf_cmp_i32";
    case DType::I64: return "kf_cmp_i64";
    case DType::Bool: return "kf_cmp_u8";
    }
    return "kf_cmp_f32_f64";
}

const std::vector<std::string> &kernelNames()
{
    static const std::vector<std::string> names{
        "kf_cmp_f32_f64", "kf_cmp_f32_f32", "kf_cmp_f16_f64", "kf_cmp_f16_f32", "kf_cmp_bf16_f64",
        "kf_cmp_bf16_f32", "kf_cmp_f64_f64", "kf_cmp_f64_f32", "kf_cmp_i32", "kf_cmp_i64", "kf_cmp_u8",
        "kf_fill_u8", "kf_fill_u16", "kf_fill_u32", "kf_fill_u64", "kf_sumsq", "kf_hash", "kf_empty"};
    return names;
}

} // namespace

Result<CompileOutput> compileCheckKernels(const std::string &arch)
{
    CompileOptions o;
    o.arch = arch;
    o.cacheDir = defaultCompileCacheDir();
    return compileCuda(kSource, kernelNames(), o);
}

Result<std::unique_ptr<CheckKernels>> CheckKernels::load(const std::string &arch)
{
    auto c = compileCheckKernels(arch);
    if (!c)
        return c.error();
    if (!c->ok)
        return makeError("engine", "the engine's check kernels do not compile for " + arch + ": " +
                                       (c->diagnostics.empty() ? c->log : c->diagnostics.front().message));
    auto m = gpu::Module::load(c->cubin, c->loweredNames);
    if (!m)
        return m.error();
    std::unique_ptr<CheckKernels> k(new CheckKernels);
    k->m_module = std::move(*m);
    int sms = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) == cudaSuccess && sms > 0)
        k->m_blocksCap = 8 * sms; // enough warps in flight to stream at the memory's rate
    return k;
}

Status CheckKernels::run(const std::string &kernel, std::int64_t work, void **args)
{
    const gpu::KernelHandle *k = m_module->kernel(kernel);
    if (!k)
        return makeError("engine", "check kernel '" + kernel + "' is missing");
    const std::int64_t wanted = (std::max<std::int64_t>(work, 1) + kThreads - 1) / kThreads;
    const unsigned blocks = unsigned(std::min<std::int64_t>(wanted, m_blocksCap));
    cudaError_t e = cudaLaunchKernel(reinterpret_cast<const void *>(k->kernel), dim3(blocks), dim3(kThreads), args, 0, nullptr);
    if (e != cudaSuccess)
        return makeError(gpu::isSticky(e) ? "fatal" : "engine", "check kernel '" + kernel + "': " + gpu::errorText(e));
    return Ok{};
}

Status CheckKernels::poison(void *data, std::int64_t numel, DType t)
{
    long long n = numel;
    switch (t) {
    case DType::F32: {
        std::uint32_t v;
        const float nan = std::numeric_limits<float>::quiet_NaN();
        std::memcpy(&v, &nan, 4);
        void *a[] = {&data, &n, &v};
        return run("kf_fill_u32", n, a);
    }
    case DType::F64: {
        std::uint64_t v;
        const double nan = std::numeric_limits<double>::quiet_NaN();
        std::memcpy(&v, &nan, 8);
        void *a[] = {&data, &n, &v};
        return run("kf_fill_u64", n, a);
    }
    case DType::F16: {
        std::uint16_t v = 0x7e00;
        void *a[] = {&data, &n, &v};
        return run("kf_fill_u16", n, a);
    }
    case DType::BF16: {
        std::uint16_t v = 0x7fc0;
        void *a[] = {&data, &n, &v};
        return run("kf_fill_u16", n, a);
    }
    case DType::I32: {
        std::uint32_t v = 0x80000000u;
        void *a[] = {&data, &n, &v};
        return run("kf_fill_u32", n, a);
    }
    case DType::I64: {
        std::uint64_t v = 0x8000000000000000ull;
        void *a[] = {&data, &n, &v};
        return run("kf_fill_u64", n, a);
    }
    case DType::Bool: {
        std::uint8_t v = 1;
        void *a[] = {&data, &n, &v};
        return run("kf_fill_u8", n, a);
    }
    }
    return makeError("engine", "no poison for this dtype");
}

Status CheckKernels::sumSquares(const double *data, std::int64_t numel, double *acc)
{
    long long n = numel;
    void *a[] = {&data, &n, &acc};
    return run("kf_sumsq", n, a);
}

Status CheckKernels::compare(const CompareArgs &c, std::uint64_t *slot)
{
    long long n = c.numel;
    double rms = c.rms, slack = c.slack, kb = c.kernelbenchTol;
    const void *out = c.out, *ref = c.ref, *eager = c.eager;
    void *a[] = {&out, &ref, &eager, &n, &rms, &slack, &kb, &slot};
    return run(compareKernel(c.outType, c.refIsF64), n, a);
}

Status CheckKernels::hash(const void *data, std::int64_t bytes, std::uint64_t salt, std::uint64_t *acc)
{
    long long words = bytes / 4;
    int tailBytes = int(bytes % 4);
    const void *tail = static_cast<const unsigned char *>(data) + words * 4;
    void *a[] = {&data, &words, &tail, &tailBytes, &salt, &acc};
    return run("kf_hash", words, a);
}

Status CheckKernels::empty()
{
    void **none = nullptr;
    return run("kf_empty", 1, none);
}

CompareStats CheckKernels::read(const std::uint64_t *w)
{
    auto dbl = [](std::uint64_t bits) {
        double d;
        std::memcpy(&d, &bits, 8);
        return d;
    };
    CompareStats s;
    s.maxScaled = dbl(w[0]);
    s.maxAbs = dbl(w[1]);
    s.nonFinite = std::int64_t(w[2]);
    s.mismatched = std::int64_t(w[3]);
    s.kernelbenchRatio = dbl(w[4]);
    return s;
}

} // namespace kf::ref
