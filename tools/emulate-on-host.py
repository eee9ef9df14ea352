#!/usr/bin/env python3
"""Checks a rendered candidate without a GPU by running its kernels on the host, thread by thread.

Usage: emulate-on-host.py PROBLEM.toml CANDIDATE.cu [--variant small]

For kernels that use neither shared memory nor barriers nor warp operations (a thread's work
depends only on its own index, as in conv_direct and the pooling pass): each kernel is compiled as
host C++ with a few CUDA names defined, launched as its @launch lines say (every block, every
thread, in order), on uniform random inputs of the problem's variant; the output is compared with
the reference evaluated by PyTorch on the CPU. Prints one line: max abs error, the reference's
largest value, NaNs, OK or FAIL (exit 1). Render candidates at the small variant first:
  kernelforge-cli coverage PROBLEM.toml --variant small --render DIR --points 8
Needs g++, Python 3.11 (tomllib) and PyTorch. A GPU's own check (test_builtin_gpu) stays the
judge: this only catches index and epilogue mistakes early.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import tomllib

import numpy as np
import torch

SHIM = r"""
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>
using std::max;
using std::min;
struct dim3 { unsigned x = 0, y = 0, z = 0; };
static dim3 blockIdx, threadIdx, gridDim, blockDim;
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__
template <class T> inline T __ldg(const T *p) { return *p; }
inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
inline float __expf(float x) { return std::exp(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
"""


def cdiv(a, b):
    return (a + b - 1) // b


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
            tensors[t["name"]] = torch.rand([dim(s) for s in t["shape"]]) * 2 - 1
    env = {"torch": torch, "Tensor": torch.Tensor}
    exec(spec["reference"]["source"], env)
    ref = env["forward"](*tensors.values())
    out = spec["outputs"][0]["name"]

    text = open(a.candidate).read()
    launches = [(m[1], eval(m[2]), eval(m[3]), [x.strip() for x in m[4].split(",")])
                for m in re.finditer(r"// @launch (\w+) grid\((.*?)\) block\((.*?)\)(?: smem\(.*?\))? args\((.*?)\)\n", text)]
    scratch = {m[1]: eval(m[2]) for m in re.finditer(r"// @scratch (\w+) float32 (.*?) \w+\n", text)}
    with tempfile.TemporaryDirectory() as wd:
        lines = [SHIM, text, "static std::vector<float> load(const char *p, size_t n) { std::vector<float> v(n); "
                 "FILE *f = fopen(p, \"rb\"); if (fread(v.data(), 4, n, f) != n) __builtin_trap(); fclose(f); return v; }",
                 "int main() {"]
        for name, t in tensors.items():
            t.contiguous().numpy().tofile(f"{wd}/{name}.bin")
            lines.append(f'  auto {name} = load("{wd}/{name}.bin", {t.numel()});')
        lines.append(f"  std::vector<float> {out}({ref.numel()}, NAN);")
        lines += [f"  std::vector<float> {n}({c}, NAN);" for n, c in scratch.items()]
        for kernel, grid, block, args in launches:
            call = ", ".join(x + ".data()" for x in args)
            lines.append(f"  gridDim.x = {grid}; blockDim.x = {block};")
            lines.append(f"  for (unsigned b = 0; b < {grid}u; ++b) for (unsigned t = 0; t < {block}u; ++t) "
                         f"{{ blockIdx.x = b; threadIdx.x = t; {kernel}({call}); }}")
        lines.append(f'  FILE *f = fopen("{wd}/out.bin", "wb"); fwrite({out}.data(), 4, {out}.size(), f); fclose(f);')
        lines.append("}")
        with open(f"{wd}/main.cpp", "w") as f:
            f.write("\n".join(lines))
        subprocess.run(["g++", "-O1", "-std=c++20", "-w", "-o", f"{wd}/a.out", f"{wd}/main.cpp"], check=True)
        subprocess.run([f"{wd}/a.out"], check=True)
        got = torch.from_numpy(np.fromfile(f"{wd}/out.bin", dtype=np.float32)).reshape(ref.shape)
    err = (got - ref).abs().max().item()
    scale = ref.abs().max().item()
    nans = int(torch.isnan(got).sum().item())
    ok = nans == 0 and err <= 1e-4 * max(1.0, scale)
    print(f"{os.path.basename(a.candidate)}: max abs error {err:.3g} (reference's largest {scale:.3g}), "
          f"{nans} NaN, {'OK' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
