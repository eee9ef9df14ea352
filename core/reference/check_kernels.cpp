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
__device__ __forceinline__ float as_float(float v) { return v; }
__device__ __forceinline__ float as_float(h16 v) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v.b)); return f; }
__device__ __forceinline__ float as_float(b16 v) { return __int_as_float(((u32)v.b) << 16); }
__device__ __forceinline__ float as_float(double v) { return (float)v; }
template <typename M, typename T> __device__ __forceinline__ M as_math(T v);
template <> __device__ __forceinline__ double as_math<double>(float v) { return as_double(v); }
template <> __device__ __forceinline__ double as_math<double>(double v) { return v; }
template <> __device__ __forceinline__ double as_math<double>(h16 v) { return as_double(v); }
template <> __device__ __forceinline__ double as_math<double>(b16 v) { return as_double(v); }
template <> __device__ __forceinline__ float as_math<float>(float v) { return v; }
template <> __device__ __forceinline__ float as_math<float>(double v) { return (float)v; }
template <> __device__ __forceinline__ float as_math<float>(h16 v) { return as_float(v); }
template <> __device__ __forceinline__ float as_math<float>(b16 v) { return as_float(v); }

// M is the arithmetic: fp64 against the fp64 reference while verifying; fp32 against the fp32
// reference a timed run is checked with (fp64 division would make the check compute-bound).
// Each thread loads kUnroll elements of each tensor before it uses any, so that enough loads are
// in flight to stream at the memory's rate.
#define kUnroll 4
template <typename O, typename R, typename M>
__device__ void compare_floats(const O *out, const R *ref, const O *eager, long long n, double rms_, double slack_,
                               double kb_, u64 *slot) {
    const M rms = (M)rms_, slack = (M)slack_, kb = (M)kb_, tiny = (M)1e-30;
    M maxScaled = 0, maxAbs = 0, kbRatio = 0;
    u64 nonFinite = 0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long base = (long long)blockIdx.x * blockDim.x + threadIdx.x; base < n; base += kUnroll * stride) {
        O ov[kUnroll];
        R rv[kUnroll];
#pragma unroll
        for (int k = 0; k < kUnroll; ++k) {
            const long long i = base + k * stride;
            if (i < n) { ov[k] = out[i]; rv[k] = ref[i]; }
        }
#pragma unroll
        for (int k = 0; k < kUnroll; ++k) {
            const long long i = base + k * stride;
            if (i >= n) break;
            const M o = as_math<M>(ov[k]);
            const M r = as_math<M>(rv[k]);
            if (r - r == (M)0) {
                if (!(o - o == (M)0)) {
                    ++nonFinite;
                } else {
                    const M d = o > r ? o - r : r - o;
                    const M a = r < (M)0 ? -r : r;
                    maxAbs = d > maxAbs ? d : maxAbs;
                    const M e = d - slack * a;
                    if (e > (M)0) {
                        const M q = e / (a + rms + tiny);
                        maxScaled = q > maxScaled ? q : maxScaled;
                    }
                }
            }
            if (eager) {
                const M e = as_math<M>(eager[i]);
                if (!(o == e)) {
                    const M q = (o > e ? o - e : e - o) / (kb + kb * (e < (M)0 ? -e : e));
                    kbRatio = q == q && q - q == (M)0 ? (q > kbRatio ? q : kbRatio) : (M)1e30;
                }
            }
        }
    }
    double ms = warp_max((double)maxScaled), ma = warp_max((double)maxAbs), kr = warp_max((double)kbRatio);
    nonFinite = warp_sum(nonFinite);
    if ((threadIdx.x & 31) == 0) {
        put_max(slot + 0, ms);
        put_max(slot + 1, ma);
        if (nonFinite) atomicAdd(slot + 2, nonFinite);
        put_max(slot + 4, kr >= 1e30 ? 1e300 : kr);
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

#define CMP_FLOAT(NAME, O, R, M) \
extern "C" __global__ void kf_cmp_##NAME(const O *out, const R *ref, const O *eager, long long n, double rms, \
                                         double slack, double kb, u64 *slot) { \
    compare_floats<O, R, M>(out, ref, eager, n, rms, slack, kb, slot); }
CMP_FLOAT(f32_f64, float, double, double)
CMP_FLOAT(f32_f32, float, float, float)
CMP_FLOAT(f16_f64, h16, double, double)
CMP_FLOAT(f16_f32, h16, float, float)
CMP_FLOAT(bf16_f64, b16, double, double)
CMP_FLOAT(bf16_f32, b16, float, float)
CMP_FLOAT(f64_f64, double, double, double)
CMP_FLOAT(f64_f32, double, float, double)

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
// The bulk of a fill, 16 bytes a store (the tail goes through the fills above).
extern "C" __global__ void kf_fill_16(uint4 *p, long long n, uint4 v) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) p[i] = v;
}

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
    case DType::F32:
        return refIsF64 ? "kf_cmp_f32_f64" : "kf_cmp_f32_f32";
    case DType::F16:
        return refIsF64 ? "kf_cmp_f16_f64" : "kf_cmp_f16_f32";
    case DType::BF16:
        return refIsF64 ? "kf_cmp_bf16_f64" : "kf_cmp_bf16_f32";
    case DType::F64:
        return refIsF64 ? "kf_cmp_f64_f64" : "kf_cmp_f64_f32";
    case DType::I32:
        return "kf_cmp_i32";
    case DType::I64:
        return "kf_cmp_i64";
    case DType::Bool:
        return "kf_cmp_u8";
    }
    return "kf_cmp_f32_f64";
}

const std::vector<std::string> &kernelNames()
{
    static const std::vector<std::string> names{
        "kf_cmp_f32_f64",  "kf_cmp_f32_f32", "kf_cmp_f16_f64", "kf_cmp_f16_f32", "kf_cmp_bf16_f64",
        "kf_cmp_bf16_f32", "kf_cmp_f64_f64", "kf_cmp_f64_f32", "kf_cmp_i32",     "kf_cmp_i64",
        "kf_cmp_u8",       "kf_fill_u8",     "kf_fill_u16",    "kf_fill_u32",    "kf_fill_u64",
        "kf_fill_16",      "kf_sumsq",       "kf_hash",        "kf_empty"};
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
        return makeError(ErrorCode::Engine,
                         "the engine's check kernels do not compile for " + arch + ": " +
                             (c->diagnostics.empty() ? c->log : c->diagnostics.front().message));
    auto m = gpu::Module::load(c->cubin, c->loweredNames);
    if (!m)
        return m.error();
    std::unique_ptr<CheckKernels> k(new CheckKernels);
    k->m_module = std::move(*m);
    int sms = 0;
    if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) == cudaSuccess && sms > 0)
        k->m_sms = sms;
    return k;
}

Status CheckKernels::run(const std::string &kernel, std::int64_t work, void **args)
{
    const gpu::KernelHandle *k = m_module->kernel(kernel);
    if (!k)
        return makeError(ErrorCode::Engine, "check kernel '" + kernel + "' is missing");
    // One full wave of resident blocks: a grid-stride loop needs no more, and a partial second
    // wave would leave most of the GPU idle at its end.
    int &resident = m_resident[kernel];
    if (resident == 0 &&
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, reinterpret_cast<const void *>(k->kernel), kThreads,
                                                      0) != cudaSuccess)
        resident = 1;
    const std::int64_t wanted = (std::max<std::int64_t>(work, 1) + kThreads - 1) / kThreads;
    const unsigned blocks = unsigned(std::min<std::int64_t>(wanted, std::int64_t(std::max(resident, 1)) * m_sms));
    cudaError_t e =
        cudaLaunchKernel(reinterpret_cast<const void *>(k->kernel), dim3(blocks), dim3(kThreads), args, 0, nullptr);
    if (e != cudaSuccess)
        return makeError(gpu::isSticky(e) ? ErrorCode::Fatal : ErrorCode::Engine,
                         "check kernel '" + kernel + "': " + gpu::errorText(e));
    return Ok{};
}

Status CheckKernels::poison(void *data, std::int64_t numel, DType t)
{
    // One element's poison bits, then that pattern over 16 bytes for the bulk of the tensor.
    std::uint64_t bits = 0;
    int size = 4;
    switch (t) {
    case DType::F32: {
        const float nan = std::numeric_limits<float>::quiet_NaN();
        std::memcpy(&bits, &nan, 4);
        break;
    }
    case DType::F64: {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        std::memcpy(&bits, &nan, 8);
        size = 8;
        break;
    }
    case DType::F16:
        bits = 0x7e00;
        size = 2;
        break;
    case DType::BF16:
        bits = 0x7fc0;
        size = 2;
        break;
    case DType::I32:
        bits = 0x80000000u;
        break;
    case DType::I64:
        bits = 0x8000000000000000ull;
        size = 8;
        break;
    case DType::Bool:
        bits = 1;
        size = 1;
        break;
    }
    unsigned char pattern[16];
    for (int i = 0; i < 16; i += size)
        std::memcpy(pattern + i, &bits, std::size_t(size));
    const std::int64_t bytes = numel * size;
    long long chunks = reinterpret_cast<std::uintptr_t>(data) % 16 == 0 ? bytes / 16 : 0;
    if (chunks > 0) {
        void *a[] = {&data, &chunks, pattern};
        if (Status s = run("kf_fill_16", chunks, a); !s)
            return s;
    }
    long long rest = (bytes - chunks * 16) / size;
    if (rest == 0)
        return Ok{};
    void *tail = static_cast<unsigned char *>(data) + chunks * 16;
    const char *kernel = size == 8 ? "kf_fill_u64"
        : size == 4                ? "kf_fill_u32"
        : size == 2                ? "kf_fill_u16"
                                   : "kf_fill_u8";
    void *a[] = {&tail, &rest, &bits};
    return run(kernel, rest, a);
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
