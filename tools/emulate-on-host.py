#!/usr/bin/env python3
"""Checks a rendered candidate without a GPU by running its kernels on the host, thread by thread.

Usage: emulate-on-host.py PROBLEM.toml CANDIDATE.cu [--variant small] [--tolerance 1e-2] [--keep DIR]

Each kernel is compiled as host C++ with the CUDA names it uses defined, and launched as its
@launch lines say on uniform random inputs of the problem's variant: blocks one after another,
each block's threads as host threads of their own, so __syncthreads (a barrier of the block),
warp shuffles (a barrier of the warp and an exchange through memory) and __shared__ arrays (one
per block, since blocks run one at a time) behave as on a GPU. The mma.sync primitives of
parts/mma_tf32_ops.cuh and parts/cp_async_zfill.cuh run on the host too: ldmatrix and mma.sync
(m16n8k8, TF32) as exchanges within the warp, cvt.rna.tf32 in integer arithmetic, and cp.async as
a plain copy that is complete at once (so an index or fragment mistake shows, a missing wait does
not); dynamic shared memory is one buffer, as blocks run one at a time. The Hopper primitives of
parts/mbarrier.cuh, parts/hopper_pipeline.cuh, parts/wgmma_smem.cuh, parts/wgmma_half_regs.cuh and
parts/wgmma_tf32_regs.cuh run too: mbarriers (arrivals, transaction bytes, phases; a wait blocks until its phase completes),
bulk copies (complete at once), and wgmma with A from shared memory or from the registers of a
warpgroup's 128 threads and B from shared memory, its descriptors and 128-byte swizzle decoded as
the tensor cores read them; a product runs at once, and a wait for products is where the
warpgroup's threads meet (they issue them together on a GPU). fp16 and
bf16 values round to nearest even. Clusters cannot run here. The output is compared with the reference evaluated
by PyTorch on the CPU (the problem's `forward` source, or its TorchScript module). Prints one
line: max abs error, the reference's largest value, NaNs, OK or FAIL (exit 1). Render candidates
at the small variant first:
  kernelforge-cli coverage PROBLEM.toml --variant small --render DIR --points 8
Needs g++, Python 3.11 (tomllib) and PyTorch. A GPU's own check (test_builtin_gpu) stays the
judge: this only catches index, reduction and epilogue mistakes early.
"""
import argparse
import contextlib
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
#include <condition_variable>
#include <map>
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
// A vote: every lane puts its predicate in its slot, the warp meets, each reads all of them.
inline unsigned __ballot_sync(unsigned, int predicate)
{
    const unsigned t = kfThread(), warp = t / 32, lane = t % 32;
    const unsigned n = std::min(32u, blockDim.x * blockDim.y * blockDim.z - 32 * warp);
    const int mine = predicate != 0;
    std::memcpy(kfSlots[warp][lane], &mine, sizeof(int));
    kfWarps[warp]->arrive_and_wait();
    unsigned bits = 0;
    for (unsigned l = 0; l < n; ++l) {
        int v;
        std::memcpy(&v, kfSlots[warp][l], sizeof(int));
        bits |= unsigned(v != 0) << l;
    }
    kfWarps[warp]->arrive_and_wait();
    return bits;
}
inline int __all_sync(unsigned mask, int predicate)
{
    const unsigned t = kfThread(), n = std::min(32u, blockDim.x * blockDim.y * blockDim.z - 32 * (t / 32));
    return __ballot_sync(mask, predicate) == (n == 32 ? 0xffffffffu : (1u << n) - 1);
}
inline int __any_sync(unsigned mask, int predicate) { return __ballot_sync(mask, predicate) != 0; }
template <class T> T atomicAdd(T *p, T v) { std::lock_guard<std::mutex> g(kfAtomics); T o = *p; *p = o + v; return o; }
template <class T> T atomicMax(T *p, T v) { std::lock_guard<std::mutex> g(kfAtomics); T o = *p; *p = std::max(o, v); return o; }
template <class T> T atomicMin(T *p, T v) { std::lock_guard<std::mutex> g(kfAtomics); T o = *p; *p = std::min(o, v); return o; }
inline void __threadfence() {}

// ---- the mma.sync primitives (parts/mma_tf32_ops.cuh, parts/cp_async_zfill.cuh) ----
alignas(1024) static unsigned char kfDynamicSmem[1 << 20];
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
// The TF32 bits as either primitive returns them: unsigned (parts/mma_tf32_ops.cuh) or the float
// they encode (parts/tf32_split.cuh).
struct KfTf32 {
    unsigned u;
    operator unsigned() const { return u; }
    operator float() const { return kfFloat(u); }
};
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

// ---- 16-bit values (cuda_fp16.h, cuda_bf16.h): round to nearest even ----
struct __half { unsigned short x; };
struct __half2 { __half x, y; };
struct __nv_bfloat16 { unsigned short x; };
struct __nv_bfloat162 { __nv_bfloat16 x, y; };
inline __half __float2half_rn(float f) { _Float16 h = (_Float16)f; __half r; std::memcpy(&r.x, &h, 2); return r; }
inline float __half2float(__half h) { _Float16 v; std::memcpy(&v, &h.x, 2); return (float)v; }
inline __nv_bfloat16 __float2bfloat16_rn(float f)
{
    unsigned u = kfBits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return {(unsigned short)((u >> 16) | 0x40u)};
    u += 0x7fffu + ((u >> 16) & 1u);
    return {(unsigned short)(u >> 16)};
}
inline float __bfloat162float(__nv_bfloat16 b) { return kfFloat(unsigned(b.x) << 16); }
inline __half2 __floats2half2_rn(float a, float b) { return {__float2half_rn(a), __float2half_rn(b)}; }
inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return {__float2bfloat16_rn(a), __float2bfloat16_rn(b)}; }
inline float __low2float(__half2 h) { return __half2float(h.x); }
inline float __high2float(__half2 h) { return __half2float(h.y); }
inline float __low2float(__nv_bfloat162 h) { return __bfloat162float(h.x); }
inline float __high2float(__nv_bfloat162 h) { return __bfloat162float(h.y); }
template <class T> unsigned long long __cvta_generic_to_shared(const T *p)
{
    return (unsigned long long)((const unsigned char *)p - kfDynamicSmem);
}

// ---- the Hopper primitives (parts/mbarrier.cuh, hopper_pipeline.cuh, wgmma_*.cuh) ----
// An mbarrier: the arrivals and transaction bytes its current phase still waits for, and how many
// phases have completed (a wait for parity p returns once the current phase's parity is not p).
struct KfBarrier { unsigned expected = 0, pending = 0; long long tx = 0; unsigned phases = 0; };
static std::mutex kfBarMutex;
static std::condition_variable kfBarChanged;
static std::map<const void *, KfBarrier> kfBars;
inline void kfBarCheck(KfBarrier &b)
{
    if (b.pending == 0 && b.tx == 0) {
        ++b.phases;
        b.pending = b.expected;
        kfBarChanged.notify_all();
    }
}
inline void kfBarInit(const void *bar, unsigned count)
{
    std::lock_guard<std::mutex> g(kfBarMutex);
    kfBars[bar] = KfBarrier{count, count, 0, 0};
}
inline void kfBarArrive(const void *bar, long long bytes)
{
    std::lock_guard<std::mutex> g(kfBarMutex);
    KfBarrier &b = kfBars.at(bar);
    if (b.pending == 0)
        __builtin_trap(); // more arrivals than the barrier expects
    b.tx += bytes;
    --b.pending;
    kfBarCheck(b);
}
inline void kfBarComplete(const void *bar, long long bytes)
{
    std::lock_guard<std::mutex> g(kfBarMutex);
    KfBarrier &b = kfBars.at(bar);
    b.tx -= bytes;
    kfBarCheck(b);
}
inline void kfBarWait(const void *bar, unsigned parity)
{
    std::unique_lock<std::mutex> g(kfBarMutex);
    kfBarChanged.wait(g, [&] { return (kfBars.at(bar).phases & 1u) != parity; });
}

// wgmma: a warpgroup's 128 threads put their A registers and B descriptor in slots, meet, and each
// computes its accumulators: register 4j + 2h + e holds row 16 warp + lane / 4 + 8h, column
// 8j + 2 (lane % 4) + e. An operand in shared memory is K-major: row r, byte b of its K at
// start + (r / 8) * stride + (r % 8) * 128 + b, the 16-byte chunk swizzled by the address's bits 7-9.
static std::vector<std::unique_ptr<std::barrier<>>> kfGroups;
static unsigned kfGroupSlots[8][128][4];
static unsigned long long kfGroupDesc[8];
inline const unsigned char *kfTileByte(unsigned long long desc, int row, int byte)
{
    const unsigned long long start = (desc & 0x3FFFull) << 4, stride = ((desc >> 32) & 0x3FFFull) << 4;
    unsigned long long a = start + (row / 8) * stride + (row % 8) * 128 + byte;
    a ^= ((a >> 7) & 7ull) << 4;
    return kfDynamicSmem + a;
}
// Value k of row r of a K-major tile of T (4 bytes: TF32, 2: fp16 or bf16 as kBf16 says).
template <int kBytes, bool kBf16> float kfTileValue(unsigned long long desc, int row, int k)
{
    const unsigned char *p = kfTileByte(desc, row, k * kBytes);
    if constexpr (kBytes == 4) {
        float f;
        std::memcpy(&f, p, 4);
        return f;
    } else {
        unsigned short h;
        std::memcpy(&h, p, 2);
        return kBf16 ? __bfloat162float(__nv_bfloat16{h}) : __half2float(__half{h});
    }
}
// d (64 x N) = [d +] A (64 x K) B (K x N), A given by value(row, k), B a K-major tile of N rows.
template <int kN, int kK, int kBytes, bool kBf16, class A>
void kfWgmma(float *d, A a, unsigned long long descB, int scaleD)
{
    const int t = int(kfThread()) % 128, warp = t / 32, lane = t % 32;
    for (int j = 0; j < kN / 8; ++j)
        for (int h = 0; h < 2; ++h)
            for (int e = 0; e < 2; ++e) {
                const int row = 16 * warp + lane / 4 + 8 * h, col = 8 * j + 2 * (lane % 4) + e;
                double sum = 0;
                for (int k = 0; k < kK; ++k)
                    sum += double(a(row, k)) * double(kfTileValue<kBytes, kBf16>(descB, col, k));
                float &out = d[4 * j + 2 * h + e];
                out = float((scaleD ? double(out) : 0.0) + sum);
            }
}
// A from the registers of the warpgroup: 16-bit values two to a register (the lower k low), a[0]
// row lane / 4, k 2 (lane % 4), a[1] 8 rows below, a[2] and a[3] 8 columns right; TF32 one to a
// register, k lane % 4, a[2] and a[3] 4 columns right.
template <int kN, int kBytes, bool kBf16>
void kfWgmmaRegs(float *d, const unsigned (&regs)[4], unsigned long long descB, int scaleD)
{
    const int t = int(kfThread()), group = t / 128;
    for (int i = 0; i < 4; ++i)
        kfGroupSlots[group][t % 128][i] = regs[i];
    kfGroups[group]->arrive_and_wait();
    constexpr int kK = kBytes == 4 ? 8 : 16;
    auto a = [&](int row, int k) {
        const int warp = row / 16, r = row % 16, within = kBytes == 4 ? k % 4 : (k % 8) / 2;
        const unsigned reg = kfGroupSlots[group][32 * warp + 4 * (r % 8) + within][(r / 8) + 2 * (k / (kK / 2))];
        if constexpr (kBytes == 4)
            return kfFloat(reg);
        const unsigned short h = (k % 2) ? (unsigned short)(reg >> 16) : (unsigned short)(reg & 0xffffu);
        return kBf16 ? __bfloat162float(__nv_bfloat16{h}) : __half2float(__half{h});
    };
    kfWgmma<kN, kK, kBytes, kBf16>(d, a, descB, scaleD);
    kfGroups[group]->arrive_and_wait();
}
template <int kN, int kBytes, bool kBf16>
void kfWgmmaSmem(float *d, unsigned long long descA, unsigned long long descB, int scaleD)
{
    constexpr int kK = kBytes == 4 ? 8 : 16;
    kfWgmma<kN, kK, kBytes, kBf16>(d, [&](int row, int k) { return kfTileValue<kBytes, kBf16>(descA, row, k); },
                                   descB, scaleD);
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
                kfGroups.clear();
                for (unsigned w = 0; w < (n + 127) / 128; ++w)
                    kfGroups.push_back(std::make_unique<std::barrier<>>(std::min(128u, n - 128 * w)));
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
                        kfGroups[kfThread() / 128]->arrive_and_drop();
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
    "to_tf32": "{ return KfTf32{kfTf32(x)}; }",
    "mma_tf32": "{ kfMmaTf32(d, a, b); }",
    "cp_async": "{ if (inside) std::memcpy(smem, gmem, kBytes); else std::memset(smem, 0, kBytes); }",
    "cp_async_commit": "{}",
    "cp_async_wait": "{}",
    "cp_async_wait_all": "{}",
    "cp_async_arrive_noinc": "{ kfBarArrive(bar, 0); }",
    "smem_addr": "{ return unsigned(__cvta_generic_to_shared(p)); }",
    "mbar_init": "{ kfBarInit(bar, count); }",
    "mbar_init_fence": "{}",
    "mbar_expect_tx": "{ kfBarArrive(bar, bytes); }",
    "mbar_arrive": "{ kfBarArrive(bar, 0); }",
    "mbar_wait": "{ kfBarWait(bar, parity); }",
    "bulk_copy": "{ std::memcpy(dst, src, bytes); kfBarComplete(bar, bytes); }",
    "wgmma_fence": "{}",
    "fence_proxy_async": "{}",
    "copy_chunk": "{ if (inside) std::memcpy(dst, src, 16); else std::memset(dst, 0, 16); }",
    "wgmma_commit": "{}",
    # The warpgroup meets: a thread past its wait has every product of the group behind it, so what
    # it releases (a stage, a fragment's registers) is no longer read by any of the 128.
    "wgmma_wait": "{ kfGroups[kfThread() / 128]->arrive_and_wait(); }",
    "fence_operands": "{}",
    "fence_packed": "{}",
    # bar.sync on the warpgroup's own barrier id, 128 threads
    "warpgroup_sync": "{ kfGroups[kfThread() / 128]->arrive_and_wait(); }",
    "wgmma_tf32": "{ kfWgmmaSmem<kBN, 4, false>(d, descA, descB, scaleD); }",
    "wgmma_f16": "{ kfWgmmaSmem<kBN, 2, false>(d, descA, descB, scaleD); }",
    "wgmma_bf16": "{ kfWgmmaSmem<kBN, 2, true>(d, descA, descB, scaleD); }",
    "wgmma_tf32_regs": "{ const unsigned r[4] = {kfBits(a[0]), kfBits(a[1]), kfBits(a[2]), kfBits(a[3])}; "
                       "kfWgmmaRegs<kBN, 4, false>(d, r, descB, scaleD); }",
    "wgmma_half_regs": "{ kfWgmmaRegs<kBN, 2, !kIsFp16<T>>(d, a, descB, scaleD); }",
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
    # The 16-bit types are the shim's, and the wgmma instruction macros are left unused.
    text = re.sub(r"#include <cuda_(?:bf16|fp16)\.h>\n", "", text)
    text = re.sub(r"^#define KF_WGMMA\w*\(.*?[^\\]\n", "", text, flags=re.M | re.S)
    return re.sub(r"extern __shared__ (?:__align__\(\d+\) )?((?:unsigned )?\w+) (\w+)\[\];",
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
    ap.add_argument("--tolerance", type=float, default=1e-4,
                    help="the largest error allowed, relative to max(1, the reference's largest value)")
    ap.add_argument("--keep", default="", help="a folder to build and run in, left in place (to debug)")
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
    if re.search(r"\basm\b|extern __shared__", re.sub(r"//[^\n]*", "", text)):
        print(f"{os.path.basename(a.candidate)}: inline PTX other than the mma.sync primitives; cannot run on the host")
        return 2
    env = dict(consts, cdiv=cdiv)
    launches = [(m[1], eval(m[2], env), eval(m[3], env), [x.strip() for x in m[4].split(",")])
                for m in re.finditer(r"// @launch (\w+) grid\((.*?)\) block\((.*?)\)(?: smem\(.*?\))? args\((.*?)\)\n", text)]
    scratch = {m[1]: (CTYPES[m[2]][0], eval(m[3], env))
               for m in re.finditer(r"// @scratch (\w+) (\w+) (.*?)(?: (?:zeroed|uninitialized))?\n", text)}
    with (tempfile.TemporaryDirectory() if not a.keep else contextlib.nullcontext(a.keep)) as wd:
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
    ok = nans == 0 and err <= a.tolerance * max(1.0, scale)
    print(f"{os.path.basename(a.candidate)}: max abs error {err:.3g} (reference's largest {scale:.3g}), "
          f"{nans} NaN, {'OK' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
