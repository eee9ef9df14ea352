#!/usr/bin/env python3
"""Checks a rendered candidate without a GPU by running its kernels on the host, thread by thread.

Usage: emulate-on-host.py PROBLEM.toml CANDIDATE.cu [--variant small]

Each kernel is compiled as host C++ with the CUDA names it uses defined, and launched as its
@launch lines say on uniform random inputs of the problem's variant: blocks one after another,
each block's threads as host threads of their own, so __syncthreads (a barrier of the block),
warp shuffles (a barrier of the warp and an exchange through memory) and __shared__ arrays (one
per block, since blocks run one at a time) behave as on a GPU. The mma.sync primitives of
parts/mma_tf32_ops.cuh and parts/cp_async_zfill.cuh run on the host too: ldmatrix and mma.sync
(m16n8k8, TF32) as exchanges within the warp, cvt.rna.tf32 in integer arithmetic, and cp.async as
a plain copy that is complete at once (so an index or fragment mistake shows, a missing wait does
not); dynamic shared memory is one buffer, as blocks run one at a time. Other inline PTX (wgmma,
bulk copies, clusters) cannot run here. The output is compared with the reference evaluated
by PyTorch on the CPU (the problem's `forward` source, or its TorchScript module). Prints one
line: max abs error, the reference's largest value, NaNs, OK or FAIL (exit 1). Render candidates
at the small variant first:
  kernelforge-cli coverage PROBLEM.toml --variant small --render DIR --points 8
Needs g++, Python 3.11 (tomllib) and PyTorch. A GPU's own check (test_builtin_gpu) stays the
judge: this only catches index, reduction and epilogue mistakes early.
"""
import argparse
import math
import os
import re
import subprocess
import sys
import tempfile
import tomllib

import numpy as np
import torch

SHIM = r"""
#include <pthread.h>
#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>
using std::isinf;
using std::isnan;
using std::max;
using std::min;
struct dim3 { unsigned x = 1, y = 1, z = 1; };
static thread_local dim3 threadIdx;
static dim3 blockIdx, gridDim, blockDim;
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__
#define __align__(n) __attribute__((aligned(n)))
#define __shared__ static  // one block at a time: a static is the block's shared memory
struct alignas(8) float2 { float x, y; };
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(4) uchar4 { unsigned char x, y, z, w; };
struct alignas(8) int2 { int x, y; };
struct alignas(16) int4 { int x, y, z, w; };
inline float2 make_float2(float x, float y) { return {x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline int2 make_int2(int x, int y) { return {x, y}; }
inline int4 make_int4(int x, int y, int z, int w) { return {x, y, z, w}; }
template <class T> inline T __ldg(const T *p) { return *p; }
template <class T> inline T __ldcs(const T *p) { return *p; }
template <class T> inline void __stcs(T *p, T v) { *p = v; }
inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
inline float __uint_as_float(unsigned i) { float f; std::memcpy(&f, &i, 4); return f; }
inline int __float_as_int(float f) { int i; std::memcpy(&i, &f, 4); return i; }
inline unsigned __float_as_uint(float f) { unsigned i; std::memcpy(&i, &f, 4); return i; }
inline float __expf(float x) { return std::exp(x); }
inline float __logf(float x) { return std::log(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }

static std::unique_ptr<std::barrier<>> kfBlock;
static std::vector<std::unique_ptr<std::barrier<>>> kfWarps;
static unsigned char kfSlots[32][32][16];
static std::mutex kfAtomics;
inline unsigned kfThread() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
inline void __syncthreads() { kfBlock->arrive_and_wait(); }
inline void __syncwarp(unsigned = 0xffffffffu) { kfWarps[kfThread() / 32]->arrive_and_wait(); }
// A shuffle: every lane puts its value in its slot, the warp meets, each reads its source's slot,
// and the warp meets again before the slots are reused.
template <class T, class F> T kfShuffle(T v, F source)
{
    const unsigned t = kfThread(), warp = t / 32, lane = t % 32;
    std::memcpy(kfSlots[warp][lane], &v, sizeof(T));
    kfWarps[warp]->arrive_and_wait();
    T r = v;
    const int from = source(int(lane));
    if (from >= 0)
        std::memcpy(&r, kfSlots[warp][from], sizeof(T));
    kfWarps[warp]->arrive_and_wait();
    return r;
}
template <class T> T __shfl_xor_sync(unsigned, T v, int mask, int width = 32)
{
    return kfShuffle(v, [&](int l) { return (l ^ mask) < ((l / width) + 1) * width ? l ^ mask : l; });
}
template <class T> T __shfl_up_sync(unsigned, T v, unsigned d, int width = 32)
{
    return kfShuffle(v, [&](int l) { return l - int(d) >= (l / width) * width ? l - int(d) : -1; });
}
template <class T> T __shfl_down_sync(unsigned, T v, unsigned d, int width = 32)
{
    return kfShuffle(v, [&](int l) { return l + int(d) < (l / width + 1) * width ? l + int(d) : -1; });
}
template <class T> T __shfl_sync(unsigned, T v, int src, int width = 32)
{
    return kfShuffle(v, [&](int l) { return (l / width) * width + src % width; });
}
template <class T> T atomicAdd(T *p, T v) { std::lock_guard<std::mutex> g(kfAtomics); T o = *p; *p = o + v; return o; }
template <class T> T atomicMax(T *p, T v) { std::lock_guard<std::mutex> g(kfAtomics); T o = *p; *p = std::max(o, v); return o; }
template <class T> T atomicMin(T *p, T v) { std::lock_guard<std::mutex> g(kfAtomics); T o = *p; *p = std::min(o, v); return o; }
inline void __threadfence() {}

// ---- the mma.sync primitives (parts/mma_tf32_ops.cuh, parts/cp_async_zfill.cuh) ----
alignas(128) static unsigned char kfDynamicSmem[1 << 20];
static unsigned kfMma[32][32][6];
inline unsigned kfBits(float f) { unsigned u; std::memcpy(&u, &f, 4); return u; }
inline float kfFloat(unsigned u) { float f; std::memcpy(&f, &u, 4); return f; }
// Rounds to the nearest TF32 (10 mantissa bits), ties away from zero, as cvt.rna.tf32.f32.
inline unsigned kfTf32(float x)
{
    const unsigned u = kfBits(x);
    if ((u & 0x7f800000u) == 0x7f800000u)
        return u;
    return (u + 0x1000u) & 0xffffe000u;
}
// ldmatrix .m8n8.x4 .b16 over 32-bit elements: lanes 8j..8j+7 give the rows of matrix j; lane l
// gets word l % 4 of row l / 4 of each.
inline void kfLdmatrix(unsigned (&r)[4], const float *row)
{
    const unsigned lane = kfThread() % 32;
    for (int j = 0; j < 4; ++j)
        r[j] = kfBits(kfShuffle(row, [&](int l) { return 8 * j + l / 4; })[lane % 4]);
}
// mma.sync.m16n8k8.row.col, TF32 in, fp32 out. Fragments (g = lane / 4, t = lane % 4): a0 (g, t),
// a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4); b0 (k t, n g), b1 (k t + 4, n g); d0 (g, 2t),
// d1 (g, 2t + 1), d2 (g + 8, 2t), d3 (g + 8, 2t + 1).
inline void kfMmaTf32(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
    const unsigned t = kfThread(), warp = t / 32, lane = t % 32;
    for (int i = 0; i < 4; ++i)
        kfMma[warp][lane][i] = a[i];
    kfMma[warp][lane][4] = b[0], kfMma[warp][lane][5] = b[1];
    kfWarps[warp]->arrive_and_wait();
    auto A = [&](int row, int k) {
        const int l = (row % 8) * 4 + k % 4;
        return kfFloat(kfMma[warp][l][(row >= 8 ? 1 : 0) + (k >= 4 ? 2 : 0)]);
    };
    auto B = [&](int k, int n) { return kfFloat(kfMma[warp][n * 4 + k % 4][4 + (k >= 4 ? 1 : 0)]); };
    const int g = int(lane) / 4, q = int(lane) % 4;
    for (int e = 0; e < 4; ++e) {
        const int row = g + (e >= 2 ? 8 : 0), col = 2 * q + e % 2;
        float sum = d[e];
        for (int k = 0; k < 8; ++k)
            sum += A(row, k) * B(k, col);
        d[e] = sum;
    }
    kfWarps[warp]->arrive_and_wait();
}

// Any buffer, passed to a kernel parameter of any pointer type.
struct KfPtr {
    void *p;
    template <class T> operator T *() const { return static_cast<T *>(p); }
};
template <class F> void kfLaunch(dim3 grid, dim3 block, F kernel)
{
    gridDim = grid;
    blockDim = block;
    const unsigned n = block.x * block.y * block.z;
    struct Arg { F *kernel; dim3 index; };
    for (unsigned bz = 0; bz < grid.z; ++bz)
        for (unsigned by = 0; by < grid.y; ++by)
            for (unsigned bx = 0; bx < grid.x; ++bx) {
                blockIdx = {bx, by, bz};
                kfBlock = std::make_unique<std::barrier<>>(n);
                kfWarps.clear();
                for (unsigned w = 0; w < (n + 31) / 32; ++w)
                    kfWarps.push_back(std::make_unique<std::barrier<>>(std::min(32u, n - 32 * w)));
                std::vector<pthread_t> threads(n);
                std::vector<Arg> args(n);
                pthread_attr_t attr;
                pthread_attr_init(&attr);
                pthread_attr_setstacksize(&attr, 1 << 18);
                for (unsigned t = 0; t < n; ++t) {
                    args[t] = {&kernel, {t % block.x, (t / block.x) % block.y, t / (block.x * block.y)}};
                    auto run = [](void *a) -> void * {
                        Arg *arg = static_cast<Arg *>(a);
                        threadIdx = arg->index;
                        (*arg->kernel)();
                        // A thread that has returned no longer counts at barriers.
                        kfWarps[kfThread() / 32]->arrive_and_drop();
                        kfBlock->arrive_and_drop();
                        return nullptr;
                    };
                    if (pthread_create(&threads[t], &attr, run, &args[t]) != 0)
                        __builtin_trap();
                }
                for (pthread_t &th : threads)
                    pthread_join(th, nullptr);
            }
}
"""

# The host versions of the parts' primitives, by function: the rendered text keeps each part's
# definitions as written, and these replace their bodies.
PRIMITIVES = {
    "ldmatrix_x4": "{ kfLdmatrix(r, smem); }",
    "lds32": "{ return kfBits(*smem); }",
    "to_tf32": "{ return kfTf32(x); }",
    "mma_tf32": "{ kfMmaTf32(d, a, b); }",
    "cp_async": "{ if (inside) std::memcpy(smem, gmem, kBytes); else std::memset(smem, 0, kBytes); }",
    "cp_async_commit": "{}",
    "cp_async_wait": "{}",
}


def host_primitives(text):
    """Replaces the body of each primitive the candidate defines, and its dynamic shared memory by
    the one buffer."""
    for name, body in PRIMITIVES.items():
        m = re.search(r"^__device__ __forceinline__ \w+ " + name + r"\(", text, re.M)
        if not m:
            continue
        start = text.index("{", m.end())
        depth, end = 0, start
        while True:
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            if depth == 0:
                break
            end += 1
        text = text[:start] + body + text[end + 1:]
    return re.sub(r"extern __shared__ (?:__align__\(\d+\) )?(\w+) (\w+)\[\];",
                  r"\1 *\2 = reinterpret_cast<\1 *>(kfDynamicSmem);", text)


def cdiv(a, b):
    return (a + b - 1) // b


def as_dim3(v):
    v = list(v) if isinstance(v, tuple) else [v]
    return "dim3{" + ", ".join(str(int(x)) for x in v + [1] * (3 - len(v))) + "}"


def draw(t, shape, dim):
    """A tensor as the problem's init names it (fan_in_uniform as torch.nn layers draw); a bool
    one true with probability 1/2, an int64 one in [0, 1000), as the engine draws them."""
    if t.get("dtype") == "bool":
        return torch.rand(shape) < 0.5
    if t.get("dtype") == "int64":
        return torch.randint(0, 1000, shape)
    init = t.get("init", "uniform")
    if init == "ones":
        return torch.ones(shape)
    if init == "zeros":
        return torch.zeros(shape)
    if init == "normal":  # low is the mean, high the standard deviation
        return torch.randn(shape) * t.get("high", 1.0) + t.get("low", 0.0)
    if init == "fan_in_uniform":
        bound = 1 / math.sqrt(dim(t.get("fan_in", math.prod(shape[1:]))))
        return (torch.rand(shape) * 2 - 1) * bound
    lo, hi = t.get("low", 0.0), t.get("high", 1.0)
    return torch.rand(shape) * (hi - lo) + lo


def reference(spec, problem_path, tensors):
    ref = spec["reference"]
    if "module" in ref:
        module = torch.jit.load(os.path.join(os.path.dirname(problem_path), ref["module"]))
        for t in spec.get("params", []):
            owner = module
            *path, last = t["attribute"].split(".")
            for part in path:
                owner = getattr(owner, part)
            getattr(owner, last).data.copy_(tensors[t["name"]])
        with torch.no_grad():
            return module.eval()(*[tensors[t["name"]] for t in spec.get("inputs", [])])
    env = {"torch": TorchScriptNames(), "Tensor": torch.Tensor, "F": torch.nn.functional}
    exec(ref["source"], env)
    with torch.no_grad():
        return env["forward"](*tensors.values())


class TorchScriptNames:
    """`torch` as a TorchScript reference sees it: some of its builtins (torch.avg_pool2d, ...) are
    in torch._C._nn, not attributes of the Python module."""

    def __getattr__(self, name):
        return getattr(torch, name) if hasattr(torch, name) else getattr(torch._C._nn, name)


CTYPES = {"float32": ("float", np.float32), "float64": ("double", np.float64), "int64": ("long long", np.int64)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("problem")
    ap.add_argument("candidate")
    ap.add_argument("--variant", default="")
    a = ap.parse_args()
    with open(a.problem, "rb") as f:
        spec = tomllib.load(f)
    consts = dict(spec.get("constants", {}))
    if a.variant:
        consts.update(spec["variants"][a.variant])

    def dim(v):
        return v if isinstance(v, int) else int(eval(str(v), {}, consts))

    torch.manual_seed(0)
    tensors = {}
    for section in ("inputs", "params"):
        for t in spec.get(section, []):
            tensors[t["name"]] = draw(t, [dim(s) for s in t["shape"]], dim)
    ref = reference(spec, a.problem, tensors)
    out_spec = spec["outputs"][0]
    out = out_spec["name"]
    out_type, out_np = CTYPES[out_spec.get("dtype", "float32")]

    text = host_primitives(open(a.candidate).read())
    if re.search(r"\basm\b|extern __shared__", text):
        print(f"{os.path.basename(a.candidate)}: inline PTX other than the mma.sync primitives; cannot run on the host")
        return 2
    env = dict(consts, cdiv=cdiv)
    launches = [(m[1], eval(m[2], env), eval(m[3], env), [x.strip() for x in m[4].split(",")])
                for m in re.finditer(r"// @launch (\w+) grid\((.*?)\) block\((.*?)\)(?: smem\(.*?\))? args\((.*?)\)\n", text)]
    scratch = {m[1]: (CTYPES[m[2]][0], eval(m[3], env))
               for m in re.finditer(r"// @scratch (\w+) (\w+) (.*?)(?: (?:zeroed|uninitialized))?\n", text)}
    with tempfile.TemporaryDirectory() as wd:
        lines = [SHIM, text, "template <class T> static std::vector<T> kfRead(const char *p, size_t n) { "
                 "std::vector<T> v(n); FILE *f = fopen(p, \"rb\"); "
                 "if (fread(v.data(), sizeof(T), n, f) != n) __builtin_trap(); fclose(f); return v; }",
                 "int main() {"]
        for name, t in tensors.items():
            t.contiguous().numpy().tofile(f"{wd}/{name}.bin")  # a bool is one byte, 0 or 1
            element = {torch.bool: "unsigned char", torch.int64: "long long"}.get(t.dtype, "float")
            lines.append(f'  auto {name} = kfRead<{element}>("{wd}/{name}.bin", {t.numel()});')
        lines.append(f"  std::vector<{out_type}> {out}({ref.numel()}, {out_type}(-12345));")
        # Scratch is zero-filled before the launches, as the engine does.
        lines += [f"  std::vector<{ctype}> {n}({c});" for n, (ctype, c) in scratch.items()]
        for kernel, grid, block, args in launches:
            call = ", ".join(f"KfPtr{{{x}.data()}}" if x in tensors or x in scratch or x == out else x
                             for x in args)
            lines.append(f"  kfLaunch({as_dim3(grid)}, {as_dim3(block)}, [&] {{ {kernel}({call}); }});")
        lines.append(f'  FILE *f = fopen("{wd}/out.bin", "wb"); fwrite({out}.data(), sizeof({out_type}), '
                     f'{out}.size(), f); fclose(f);')
        lines.append("}")
        with open(f"{wd}/main.cpp", "w") as f:
            f.write("\n".join(lines))
        subprocess.run(["g++", "-O1", "-std=c++20", "-w", "-pthread", "-o", f"{wd}/a.out", f"{wd}/main.cpp"],
                       check=True)
        subprocess.run([f"{wd}/a.out"], check=True)
        got = torch.from_numpy(np.fromfile(f"{wd}/out.bin", dtype=out_np)).reshape(ref.shape)
    if not ref.is_floating_point():
        wrong = int((got != ref).sum().item())
        print(f"{os.path.basename(a.candidate)}: {wrong} of {ref.numel()} differ, {'OK' if wrong == 0 else 'FAIL'}")
        return 0 if wrong == 0 else 1
    err = (got - ref).abs().max().item()
    scale = ref.abs().max().item()
    nans = int(torch.isnan(got).sum().item())
    ok = nans == 0 and err <= 1e-4 * max(1.0, scale)
    print(f"{os.path.basename(a.candidate)}: max abs error {err:.3g} (reference's largest {scale:.3g}), "
          f"{nans} NaN, {'OK' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
