#!/usr/bin/env python3
"""Benchmark the built-in generator's GEMM and convolution templates on the GPU machine.

Renders each template of resources/templates/ by plain {{NAME}} substitution at several parameter
points, compiles it with nvcc for sm_90a, launches it as its // @launch lines say (through CuPy),
checks it against an fp64 PyTorch reference with the design's scale-aware rule
    max |out - ref| / (|ref| + rms(ref))  <=  1e-4 (strict) or 1e-2 (loose),
on normal inputs with the output poisoned by NaN first, and times it (median of CUDA-event runs,
L2 flushed before each by writing a 256 MB buffer) next to PyTorch eager in the same run.
The table comes last. Each variant runs in its own try/except; failures appear in the table.

  tools/template-bench.py                 # seed matmul, conv, conv+relu+maxpool, plus checks
  tools/template-bench.py --quick         # fewer parameter points
  tools/template-bench.py --only conv     # variants whose problem or family contains "conv"
  tools/template-bench.py --only conv2d --label "64x96 s2"   # one parameter point
  tools/template-bench.py --sass          # also count HMMA / FFMA instructions (cuobjdump)
  tools/template-bench.py --render-only DIR   # no GPU: write every rendered variant to DIR
  tools/template-bench.py --builtin [PROBLEM.toml|FOLDER ...] [--cli PATH] [--points N]
      # the built-in generator's own candidates: kernelforge-cli coverage --render writes, for each
      # problem (default: tests/builtin/data/problems), the best point of every idea that applies;
      # each is checked against the problem's reference in fp64 and timed next to eager PyTorch

Needs PyTorch with CUDA, CuPy and nvcc (CUDA 13) for the GPU runs; --render-only needs neither;
--builtin also needs a built kernelforge-cli and kernelforge-worker (tools/gpu-build.sh).
"""
import argparse
import concurrent.futures
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEMPLATES = os.path.join(ROOT, "resources", "templates")
STRICT, LOOSE = 1e-4, 1e-2

# ---------------------------------------------------------------------------------------------
# Rendering and @launch lines (no GPU needed)
# ---------------------------------------------------------------------------------------------


def truthy(v):
    return str(v) not in ("", "0", "false")


def sections(text, params):
    """{{#NAME}}...{{/NAME}} kept when NAME is truthy, {{^NAME}}...{{/NAME}} when it is not, as the
    generator's renderer does (a line holding only a tag leaves no blank line)."""
    text = re.sub(r"^[ \t]*(\{\{[#^/][A-Z0-9_]+\}\})[ \t]*\n", r"\1", text, flags=re.M)
    pattern = re.compile(r"\{\{([#^])([A-Z0-9_]+)\}\}(.*?)\{\{/\2\}\}", re.S)
    while True:
        m = pattern.search(text)
        if not m:
            return text
        keep = truthy(params.get(m.group(2), "")) == (m.group(1) == "#")
        text = text[:m.start()] + (m.group(3) if keep else "") + text[m.end():]


def include_parts(text):
    """A line holding only {{>NAME}} becomes parts/NAME.cuh, as the generator's loader does."""
    def part(m):
        with open(os.path.join(TEMPLATES, "parts", m.group(1) + ".cuh")) as f:
            return f.read()
    for _ in range(5):  # parts may include parts
        text = re.sub(r"^[ \t]*\{\{>([A-Za-z0-9_]+)\}\}[ \t]*\n", part, text, flags=re.M)
    return text


# What the generator fills in from the GPU's own figures (an H200's shared memory, in bytes).
GPU_VALUES = dict(SMEM_PER_BLOCK=232448, SMEM_PER_SM=233472)
# The kernel names (and the 3xTF32 product's default of no promotion) the generator gives templates
# whose main loop comes from a shared part.
TEMPLATE_VALUES = {
    "gemm_mma_tf32x3.cu": dict(KERNEL="gemm_tf32x3", PROMOTE=0),
    "gemm_mma_tf32.cu": dict(KERNEL="gemm_tf32"),
    "conv_implicit_gemm_tf32x3.cu": dict(KERNEL="conv_tf32x3"),
    "conv_implicit_gemm_tf32.cu": dict(KERNEL="conv_tf32"),
}


def render(template, params):
    """{{NAME}} substitution after sections; every placeholder must have a value and none may remain."""
    params = dict(GPU_VALUES, **dict(TEMPLATE_VALUES.get(template, {}), **params))
    with open(os.path.join(TEMPLATES, template)) as f:
        text = sections(include_parts(f.read()), params)
    missing = sorted(set(re.findall(r"\{\{([A-Z0-9_]+)\}\}", text)) - set(params))
    if missing:
        raise KeyError("%s: no value for %s" % (template, ", ".join(missing)))
    text = re.sub(r"\{\{([A-Z0-9_]+)\}\}", lambda m: str(params[m.group(1)]), text)
    if "{{" in text or "}}" in text:
        raise ValueError("%s: a placeholder is left after rendering" % template)
    return text


def cdiv(a, b):
    return (a + b - 1) // b


def eval_expr(expr):
    """A rendered launch expression: integers, + - * / % ( ), cdiv, min, max (C semantics, >= 0)."""
    py = expr.replace("/", "//")
    if not re.fullmatch(r"[0-9+\-*/% (),a-z]*", py):
        raise ValueError("unexpected launch expression: " + expr)
    return int(eval(py, {"__builtins__": {}}, {"cdiv": cdiv, "min": min, "max": max}))


def split_top(text):
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def group(line, key):
    """The text inside key(...) of a directive line, with nested parentheses."""
    i = line.find(key + "(")
    if i < 0:
        return None
    i += len(key) + 1
    depth, j = 1, i
    while depth:
        depth += {"(": 1, ")": -1}.get(line[j], 0)
        j += 1
    return line[i:j - 1]


def parse_launches(text):
    """[(kernel, grid(3), block(3), smem, [arg names])] from the // @launch lines."""
    launches = []
    for line in text.splitlines():
        m = re.match(r"\s*//\s*@launch\s+(\w+)\s", line)
        if not m:
            continue
        dims = lambda key: ([eval_expr(e) for e in split_top(group(line, key))] + [1, 1])[:3]
        smem = group(line, "smem")
        launches.append((m.group(1), dims("grid"), dims("block"), eval_expr(smem) if smem else 0,
                         split_top(group(line, "args"))))
    return launches


def parse_scratch(text):
    """[(name, dtype, count, uninitialized)] from the // @scratch lines."""
    out = []
    for line in text.splitlines():
        m = re.match(r"\s*//\s*@scratch\s+(\w+)\s+(\w+)\s+(.*?)\s*$", line)
        if not m:
            continue
        count, uninit = m.group(3), False
        if count.endswith(" uninitialized"):
            count, uninit = count[: -len(" uninitialized")], True
        out.append((m.group(1), m.group(2), eval_expr(count), uninit))
    return out


def precision_of(text):
    m = re.search(r"//\s*@precision\s+(\w+)", text)
    return m.group(1) if m else "fp32"


# ---------------------------------------------------------------------------------------------
# Problems and parameter points
# ---------------------------------------------------------------------------------------------

NO_EPILOGUE = dict(EPILOGUE="acc", EPILOGUE_ARGS="", EPILOGUE_PARAMS="")
BIAS = dict(EPILOGUE_ARGS=", bias", EPILOGUE_PARAMS=", const float *__restrict__ bias")


def gemm_params(m, n, k, batch=1, trans_b=False, names=("A", "B", "out"), epilogue=None, ksplit=1):
    p = dict(M=m, N=n, K=k, BATCH=batch, TRANS_B="true" if trans_b else "false", A_IMAGES=batch, B_IMAGES=batch,
             A_BATCH_STRIDE=m * k if batch > 1 else 0, B_BATCH_STRIDE=k * n if batch > 1 else 0,
             C_BATCH_STRIDE=m * n if batch > 1 else 0, A=names[0], B=names[1], OUT=names[2], GROUP_M=8,
             KSPLIT=ksplit, SPLITK=int(ksplit > 1), SUM_WORDS=ksplit * batch * m * n if ksplit > 1 else 1,
             COMBINE_GRID=cdiv(batch * m * n, 256))
    p.update(epilogue or NO_EPILOGUE)
    return p


def conv_params(b, c, h, w, oc, r, s, stride, pad, epilogue=None, pool=None):
    oh = (h + 2 * pad - r) // stride + 1
    ow = (w + 2 * pad - s) // stride + 1
    p = dict(BATCH=b, IN_C=c, IN_H=h, IN_W=w, OUT_C=oc, KH=r, KW=s, STRIDE_H=stride, STRIDE_W=stride,
             PAD_H=pad, PAD_W=pad, DIL_H=1, DIL_W=1, OUT_H=oh, OUT_W=ow, X="x", WEIGHT="weight", OUT="out")
    p.update(epilogue or dict(EPILOGUE="acc + bias[col]", **BIAS))
    if pool:
        pk, ps = pool
        p.update(POOL_KH=pk, POOL_KW=pk, POOL_SH=ps, POOL_SW=ps, POOL_PAD_H=0, POOL_PAD_W=0,
                 POOL_OUT_H=(oh - pk) // ps + 1, POOL_OUT_W=(ow - pk) // ps + 1, POOL=1, CONV_OUT="act",
                 POOL_MAX="true", POOL_COUNT_PAD="true", POOL_DIVISOR=0)
    else:  # templates that can pool take a 0x0 window as "no pooling"
        p.update(POOL_KH=0, POOL_KW=0, POOL_SH=1, POOL_SW=1, POOL_PAD_H=0, POOL_PAD_W=0, POOL_OUT_H=0, POOL_OUT_W=0,
                 POOL=0, CONV_OUT="out", POOL_MAX="true", POOL_COUNT_PAD="true", POOL_DIVISOR=0)
    return p


def tiles_mma(bm, bn, bk, wm, wn, stages, min_blocks=1):
    return dict(BM=bm, BN=bn, BK=bk, WM=wm, WN=wn, STAGES=stages, MIN_BLOCKS=min_blocks)


def tiles_fp16(bm, bn, bk, wm, wn, min_blocks=1):
    return dict(BM=bm, BN=bn, BK=bk, WM=wm, WN=wn, MIN_BLOCKS=min_blocks)


def tiles_wgmma(wgs, bn, stages, promote, split=3, producers=1, half=False):
    precision = "fp16" if half else "tf32x3" if split == 3 else "tf32"
    return dict(WGS=wgs, BN=bn, STAGES=stages, PROMOTE=promote, SPLIT=split, PRECISION=precision,
                PRODUCERS=producers, HALF=int(half))


def tiles_regs(wgs, bn, stages, promote, split=3, blocks=2):
    return dict(WGS=wgs, BN=bn, STAGES=stages, PROMOTE=promote, SPLIT=split, PRECISION="tf32x3" if split == 3 else "tf32",
                BLOCKS=blocks)


def tiles_simt(bm, bn, bk, tm, tn):
    return dict(BM=bm, BN=bn, BK=bk, TM=tm, TN=tn)


# Parameter points per family: (label, tile params, in --quick).
POINTS = {
    "gemm_tiled_fp32.cu": [
        ("128x128x8 t8x8", tiles_simt(128, 128, 8, 8, 8), True),
        ("128x128x16 t8x8", tiles_simt(128, 128, 16, 8, 8), False),
    ],
    "gemm_mma_tf32x3.cu": [
        ("128x128x32 w64x32 s3", tiles_mma(128, 128, 32, 64, 32, 3), True),
        ("128x128x32 w64x32 s4", tiles_mma(128, 128, 32, 64, 32, 4), False),
        ("128x256x32 w64x64 s3", tiles_mma(128, 256, 32, 64, 64, 3), False),
        ("128x128x16 w64x32 s5", tiles_mma(128, 128, 16, 64, 32, 5), False),
    ],
    "gemm_wgmma.cu": [
        ("x3 128x128 s3 p4", tiles_wgmma(2, 128, 3, 4), True),
        ("x3 128x128 s3 p8", tiles_wgmma(2, 128, 3, 8), True),
        ("x3 128x96 s4 p4", tiles_wgmma(2, 96, 4, 4), False),
        ("x3 64x128 s4 p4", tiles_wgmma(1, 128, 4, 4), False),
        ("x3 128x128 s3 p1000", tiles_wgmma(2, 128, 3, 1000), False),
        ("x1 128x128 s4 p8", tiles_wgmma(2, 128, 4, 8, split=1), True),
        ("x1 128x256 s4 one chunk", tiles_wgmma(2, 256, 4, 65536, split=1), True),
        ("fp16 128x128 s4 p8", tiles_wgmma(2, 128, 4, 8, split=1, half=True), True),
        ("fp16 128x128 s6 one chunk", tiles_wgmma(2, 128, 6, 65536, split=1, half=True), True),
        ("fp16 128x256 s3 one chunk", tiles_wgmma(2, 256, 3, 65536, split=1, half=True), True),
        ("fp16 128x256 s4 one chunk", tiles_wgmma(2, 256, 4, 65536, split=1, half=True), True),
    ],
    "gemm_mma_tf32.cu": [
        ("128x128x32 w64x32 s3", tiles_mma(128, 128, 32, 64, 32, 3), True),
        ("128x256x32 w64x64 s3", tiles_mma(128, 256, 32, 64, 64, 3), True),
        ("256x128x32 w64x64 s3", tiles_mma(256, 128, 32, 64, 64, 3), False),
    ],
    "gemm_mma_fp16.cu": [
        ("128x128x32 w64x32", tiles_fp16(128, 128, 32, 64, 32), True),
        ("128x256x32 w64x64", tiles_fp16(128, 256, 32, 64, 64), True),
        ("128x128x64 w64x32", tiles_fp16(128, 128, 64, 64, 32), False),
    ],
    "conv_implicit_gemm_tf32x3.cu": [
        ("128x96x32 w32x48 s3 b2", tiles_mma(128, 96, 32, 32, 48, 3, 2), True),
        ("128x96x16 w32x48 s4 b2", tiles_mma(128, 96, 16, 32, 48, 4, 2), False),
        ("128x96x32 w32x48 s3 b1", tiles_mma(128, 96, 32, 32, 48, 3, 1), False),
        ("64x96x32 w32x48 s4 b3", tiles_mma(64, 96, 32, 32, 48, 4, 3), False),
    ],
    "conv_wgmma.cu": [
        ("x3 128x96 s3 p16", tiles_wgmma(2, 96, 3, 16), True),
        ("x3 64x96 s2 p16", tiles_wgmma(1, 96, 2, 16), True),
        ("x3 128x96 s3 p16 P2", tiles_wgmma(2, 96, 3, 16, producers=2), True),
        ("x3 64x96 s2 p16 P2", tiles_wgmma(1, 96, 2, 16, producers=2), True),
        ("x3 64x96 s3 p16 P2", tiles_wgmma(1, 96, 3, 16, producers=2), False),
        ("x1 128x96 s4 p16", tiles_wgmma(2, 96, 4, 16, split=1), True),
    ],
    "conv_wgmma_regs.cu": [
        ("x3 64x96 s2 p16 b3", tiles_regs(1, 96, 2, 16, blocks=3), True),
        ("x3 64x96 s3 p16 b2", tiles_regs(1, 96, 3, 16, blocks=2), True),
        ("x3 128x96 s4 p16 b1", tiles_regs(2, 96, 4, 16, blocks=1), True),
        ("x3 64x96 s2 p4 b2", tiles_regs(1, 96, 2, 4, blocks=2), False),
        ("x1 64x96 s2 p16 b3", tiles_regs(1, 96, 2, 16, split=1, blocks=3), True),
    ],
    "conv_implicit_gemm_tf32.cu": [
        ("128x96x32 w32x48 s3 b2", tiles_mma(128, 96, 32, 32, 48, 3, 2), True),
        ("128x96x16 w32x48 s4 b2", tiles_mma(128, 96, 16, 32, 48, 4, 2), False),
    ],
    "conv_implicit_gemm_pool.cu": [
        ("x3 128x96x32 w32x48 s3 b2", dict(tiles_mma(128, 96, 32, 32, 48, 3, 2), SPLIT=3, PRECISION="tf32x3"), True),
        ("x3 128x96x16 w32x48 s4 b2", dict(tiles_mma(128, 96, 16, 32, 48, 4, 2), SPLIT=3, PRECISION="tf32x3"), False),
        ("x1 128x96x32 w32x48 s3 b2", dict(tiles_mma(128, 96, 32, 32, 48, 3, 2), SPLIT=1, PRECISION="tf32"), True),
    ],
}

GEMM_FAMILIES = ["gemm_tiled_fp32.cu", "gemm_mma_tf32x3.cu", "gemm_wgmma.cu", "gemm_mma_tf32.cu", "gemm_mma_fp16.cu"]
CONV_FAMILIES = ["conv_implicit_gemm_tf32x3.cu", "conv_wgmma.cu", "conv_wgmma_regs.cu", "conv_implicit_gemm_tf32.cu"]


def problems():
    """(problem, kind, size dict, size params, families, big?) — big problems are timed."""
    out = []
    seed_conv = dict(b=100, c=3, h=224, w=224, oc=96, r=11, s=11, stride=4, pad=2)
    out.append(("matmul", "gemm", dict(m=4096, n=4096, k=4096), gemm_params(4096, 4096, 4096), GEMM_FAMILIES, True))
    out.append(("conv2d", "conv", seed_conv, conv_params(**seed_conv), CONV_FAMILIES, True))
    relu = dict(EPILOGUE="fmaxf(acc + bias[col], 0.0f)", **BIAS)
    out.append(("conv2d_relu_maxpool", "conv_pool", dict(seed_conv, pool=(3, 2)),
                conv_params(**seed_conv, epilogue=relu, pool=(3, 2)), ["conv_implicit_gemm_pool.cu", "conv_wgmma.cu", "conv_wgmma_regs.cu"], True))
    lin = dict(EPILOGUE="fmaxf(acc + bias[col], 0.0f)", **BIAS)
    out.append(("linear_bias_relu", "linear", dict(m=8192, n=4096, k=2048),
                gemm_params(8192, 4096, 2048, trans_b=True, names=("x", "weight", "out"), epilogue=lin),
                ["gemm_mma_tf32x3.cu", "gemm_wgmma.cu", "gemm_mma_fp16.cu"], True))
    out.append(("bmm", "bmm", dict(l=128, m=512, n=512, k=1024), gemm_params(512, 512, 1024, batch=128),
                ["gemm_mma_tf32x3.cu", "gemm_wgmma.cu"], True))
    # A long K and a small output: the wgmma product with K split into 32 slices (gemm_wgmma only).
    out.append(("matmul_large_k", "gemm", dict(m=256, n=256, k=262144), gemm_params(256, 256, 262144, ksplit=32),
                ["gemm_wgmma.cu"], True))
    # Uniform [0, 1) operands: every product positive, so a biased (truncating) accumulation shows.
    out.append(("check matmul uniform", "gemm_uniform", dict(m=4096, n=4096, k=4096), gemm_params(4096, 4096, 4096),
                ["gemm_mma_tf32x3.cu", "gemm_wgmma.cu"], False))
    # Odd sizes: every edge path (partial tiles, K not a multiple of the tile or of 4).
    out.append(("check gemm 129x72x38", "gemm", dict(m=129, n=72, k=38), gemm_params(129, 72, 38), GEMM_FAMILIES, False))
    out.append(("check linear 77x40x36", "linear", dict(m=77, n=40, k=36),
                gemm_params(77, 40, 36, trans_b=True, names=("x", "weight", "out"), epilogue=lin),
                GEMM_FAMILIES, False))
    out.append(("check bmm 3x33x20x44", "bmm", dict(l=3, m=33, n=20, k=44), gemm_params(33, 20, 44, batch=3),
                GEMM_FAMILIES, False))
    small = dict(b=3, c=5, h=23, w=21, oc=20, r=3, s=5, stride=2, pad=1)
    out.append(("check conv small", "conv", small, conv_params(**small), CONV_FAMILIES, False))
    pointwise = dict(b=2, c=8, h=9, w=7, oc=24, r=1, s=1, stride=1, pad=0, bias=False)
    out.append(("check conv 1x1 no bias", "conv", pointwise,
                conv_params(**{k: v for k, v in pointwise.items() if k != "bias"}, epilogue=NO_EPILOGUE),
                CONV_FAMILIES, False))
    out.append(("check conv+pool small", "conv_pool", dict(small, pool=(3, 2)),
                conv_params(**small, epilogue=relu, pool=(3, 2)), ["conv_implicit_gemm_pool.cu", "conv_wgmma.cu", "conv_wgmma_regs.cu"], False))
    return out


SEEDS = ("matmul", "conv2d", "conv2d_relu_maxpool", "check matmul uniform")


def variants(quick, only):
    """Every (problem, kind, sizes, family, label, params) to run: all points of each family on the
    seed problems (the --quick ones with --quick), the first point elsewhere."""
    out = []
    for name, kind, sizes, base, families, big in problems():
        for fam in families:
            points = POINTS[fam]
            if name not in SEEDS:
                points = points[:1]
            elif quick:
                points = [p for p in points if p[2]]
            for label, tiles, _ in points:
                if only and only not in name and only not in fam:
                    continue
                params = dict(base)
                params.update(tiles)
                params.update(TITLE=fam[:-3], IDEA="template-bench", PARAMS=label, PROBLEM=name.replace(" ", "_"),
                              SUMMARY=" ".join("%s=%s" % kv for kv in sorted(sizes.items())))
                out.append((name, kind, sizes, fam, label, params))
    return out


# ---------------------------------------------------------------------------------------------
# GPU side
# ---------------------------------------------------------------------------------------------


def nvcc_path():
    for p in (shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if p and os.path.exists(p):
            return p
    raise RuntimeError("nvcc not found")


def compile_cubin(src, workdir, tag):
    """nvcc -cubin for sm_90a; returns (cubin path, ptxas summary)."""
    cu = os.path.join(workdir, tag + ".cu")
    cubin = os.path.join(workdir, tag + ".cubin")
    with open(cu, "w") as f:
        f.write(src)
    cmd = [nvcc_path(), "-std=c++17", "-cubin", "-gencode=arch=compute_90a,code=sm_90a", "-Xptxas", "-v",
           "-lineinfo", "-o", cubin, cu]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("nvcc failed: " + (r.stderr.strip().splitlines() or ["?"])[0][:200])
    regs = re.findall(r"Used (\d+) registers", r.stderr)
    spills = re.findall(r"(\d+) bytes spill stores", r.stderr)
    info = "regs %s spill %s" % ("/".join(regs), "/".join(spills))
    return cubin, info


def sass_counts(cubin):
    tool = shutil.which("cuobjdump") or os.path.join(os.path.dirname(nvcc_path()), "cuobjdump")
    if not os.path.exists(tool):
        return "no cuobjdump"
    r = subprocess.run([tool, "-sass", cubin], capture_output=True, text=True)
    count = lambda op: len(re.findall(r"\b%s\b" % op, r.stdout))
    return "HMMA %d FFMA %d LDSM %d LDGSTS %d STL %d" % (count("HMMA[.A-Z0-9]*"), count("FFMA"),
                                                        count("LDSM[.A-Z0-9]*"), count("LDGSTS[.A-Z0-9]*"),
                                                        count("STL[.A-Z0-9]*"))


class Gpu:
    def __init__(self):
        import cupy
        import numpy
        import torch
        self.torch, self.cupy, self.np = torch, cupy, numpy
        self.dev = torch.device("cuda")
        self.flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device=self.dev)

    def time(self, fn, runs):
        torch = self.torch
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        events = []
        for _ in range(runs):
            self.flush.zero_()  # evicts the working set from L2 (50 MB on the H200)
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            events.append((s, e))
        torch.cuda.synchronize()
        times = sorted(s.elapsed_time(e) for s, e in events)
        return times[len(times) // 2]

    # -- problem data and references --
    def make(self, kind, sizes, seed=0):
        torch = self.torch
        g = torch.Generator(device=self.dev).manual_seed(seed)
        randn = lambda *shape: torch.randn(*shape, generator=g, device=self.dev)
        unif = lambda bound, *shape: (torch.rand(*shape, generator=g, device=self.dev) * 2 - 1) * bound
        if kind == "gemm_uniform":
            t = dict(A=torch.rand(sizes["m"], sizes["k"], generator=g, device=self.dev),
                     B=torch.rand(sizes["k"], sizes["n"], generator=g, device=self.dev))
            ref = t["A"].double() @ t["B"].double()
            eager = lambda t: t["A"] @ t["B"]
        elif kind == "gemm":
            t = dict(A=randn(sizes["m"], sizes["k"]), B=randn(sizes["k"], sizes["n"]))
            ref = t["A"].double() @ t["B"].double()
            eager = lambda t: t["A"] @ t["B"]
        elif kind == "bmm":
            t = dict(A=randn(sizes["l"], sizes["m"], sizes["k"]), B=randn(sizes["l"], sizes["k"], sizes["n"]))
            ref = torch.bmm(t["A"].double(), t["B"].double())
            eager = lambda t: torch.bmm(t["A"], t["B"])
        elif kind == "linear":
            bound = 1 / math.sqrt(sizes["k"])
            t = dict(x=randn(sizes["m"], sizes["k"]), weight=unif(bound, sizes["n"], sizes["k"]), bias=unif(bound, sizes["n"]))
            ref = torch.relu(torch.addmm(t["bias"].double(), t["x"].double(), t["weight"].double().t()))
            eager = lambda t: torch.relu(torch.addmm(t["bias"], t["x"], t["weight"].t()))
        else:
            s = sizes
            bound = 1 / math.sqrt(s["c"] * s["r"] * s["s"])
            t = dict(x=randn(s["b"], s["c"], s["h"], s["w"]), weight=unif(bound, s["oc"], s["c"], s["r"], s["s"]),
                     bias=unif(bound, s["oc"]))
            if not s.get("bias", True):
                del t["bias"]
            conv = lambda t, d: torch.conv2d(t["x"].to(d), t["weight"].to(d), t["bias"].to(d) if "bias" in t else None,
                                             s["stride"], s["pad"])
            if kind == "conv":
                ref = conv(t, torch.float64)
                eager = lambda t: conv(t, torch.float32)
            else:
                pk, ps = s["pool"]
                ref = torch.max_pool2d(torch.relu(conv(t, torch.float64)), pk, ps)
                eager = lambda t: torch.max_pool2d(torch.relu(conv(t, torch.float32)), pk, ps)
        return t, ref, eager

    @staticmethod
    def scaled_error(out, ref):
        import torch
        if not torch.isfinite(out).all():
            return float("inf")
        ref = ref.double()
        rms = ref.pow(2).mean().sqrt()
        return ((out.double() - ref).abs() / (ref.abs() + rms)).max().item()

    def launcher(self, cubin, launches, tensors, scratch=()):
        """Runs the launches in order. Zeroed scratch is cleared before each run, as the engine
        does; uninitialized scratch starts as NaN (all-ones bytes) and is then left alone."""
        mod = self.cupy.RawModule(path=cubin)
        torch = self.torch
        tensors = dict(tensors)
        zeroed = []
        for name, dtype, count, uninit in scratch:
            t = torch.empty(count, dtype=getattr(torch, {"float32": "float32", "float64": "float64", "int64": "int64",
                                                        "int32": "int32"}[dtype]), device=self.dev)
            if uninit:
                t.view(torch.uint8).fill_(255)
            else:
                zeroed.append(t)
            tensors[name] = t
        calls = []
        for kernel, grid, block, smem, args in launches:
            fn = mod.get_function(kernel)
            if smem > 48 * 1024:
                fn.max_dynamic_shared_size_bytes = smem
            ptrs = tuple(self.np.uint64(tensors[a].data_ptr()) for a in args)
            calls.append((fn, tuple(grid), tuple(block), ptrs, smem))

        def run():
            for t in zeroed:
                t.zero_()
            for fn, grid, block, ptrs, smem in calls:
                fn(grid, block, ptrs, shared_mem=smem)
        return run


# ---------------------------------------------------------------------------------------------
# The built-in generator's candidates (--builtin)
# ---------------------------------------------------------------------------------------------


def find_cli(given):
    for p in (given, os.environ.get("KERNELFORGE_CLI"), os.path.join(ROOT, "build-gpu", "app", "cli", "kernelforge-cli"),
              os.path.join(ROOT, "build", "app", "cli", "kernelforge-cli")):
        if p and os.path.exists(p):
            return p
    raise RuntimeError("no kernelforge-cli: build it (tools/gpu-build.sh) or pass --cli")


def render_builtin(cli, paths, points, workdir):
    """{problem: (problem.json, [(idea file, source)])} from kernelforge-cli coverage --render."""
    files = []
    for p in paths or [os.path.join(ROOT, "tests", "builtin", "data", "problems")]:
        files += sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".toml")) if os.path.isdir(p) else [p]
    r = subprocess.run([cli, "coverage", *files, "--render", workdir, "--points", str(points)], capture_output=True,
                       text=True)
    print(r.stdout, end="")
    if r.returncode != 0:
        raise RuntimeError("kernelforge-cli coverage failed: " + r.stderr.strip()[-400:])
    out = {}
    for name in sorted(os.listdir(workdir)):
        folder = os.path.join(workdir, name)
        if not os.path.isfile(os.path.join(folder, "problem.json")):
            continue
        with open(os.path.join(folder, "problem.json")) as f:
            problem = json.load(f)
        cands = []
        for fn in sorted(os.listdir(folder)):
            if fn.endswith(".cu"):
                with open(os.path.join(folder, fn)) as f:
                    cands.append((fn[:-3], f.read()))
        out[name] = (problem, cands)
    return out


class AtenFallback:
    """torch for a problem's reference: TorchScript reaches every aten op as torch.NAME (torch.mish,
    torch.smooth_l1_loss); Python has some of them only under torch.ops.aten."""

    def __init__(self, torch):
        self.torch = torch

    def __getattr__(self, name):
        try:
            return getattr(self.torch, name)
        except AttributeError:
            return getattr(self.torch.ops.aten, name)


def problem_tensors(gpu, problem, seed=0):
    """The problem's inputs and parameters, as its initialisers draw them, by name and in order."""
    torch = gpu.torch
    g = torch.Generator(device=gpu.dev).manual_seed(seed)
    tensors = {}
    for t in problem["inputs"]:
        shape, init = t["shape"], t["init"]
        if init == "normal":
            x = torch.randn(shape, generator=g, device=gpu.dev)
        elif init == "exponential":
            x = torch.empty(shape, device=gpu.dev).exponential_(generator=g)
        elif init == "lognormal":
            x = torch.empty(shape, device=gpu.dev).log_normal_(generator=g)
        elif init == "laplace":
            u = torch.rand(shape, generator=g, device=gpu.dev).clamp_(1e-7, 1 - 1e-7) - 0.5
            x = -u.sign() * torch.log1p(-2 * u.abs())
        else:
            x = torch.rand(shape, generator=g, device=gpu.dev)
        tensors[t["name"]] = x
    for t in problem["params"]:
        shape, init = t["shape"], t["init"]
        if init == "ones":
            x = torch.ones(shape, device=gpu.dev)
        elif init == "zeros":
            x = torch.zeros(shape, device=gpu.dev)
        elif init == "normal":
            x = torch.randn(shape, generator=g, device=gpu.dev) * t["high"] + t["low"]
        elif init == "uniform":
            x = torch.rand(shape, generator=g, device=gpu.dev) * (t["high"] - t["low"]) + t["low"]
        else:  # fan_in_uniform
            bound = 1 / math.sqrt(max(t["fan_in"], 1))
            x = (torch.rand(shape, generator=g, device=gpu.dev) * 2 - 1) * bound
        tensors[t["name"]] = x
    return tensors


def bench_problem(gpu, name, problem, cands, builds, runs):
    """One row per candidate of one problem: verdict against the fp64 reference, time next to eager."""
    torch = gpu.torch
    try:
        tensors = problem_tensors(gpu, problem)
        names = [t["name"] for t in problem["inputs"]] + [t["name"] for t in problem["params"]]
        scope = {"torch": AtenFallback(torch), "Tensor": torch.Tensor}
        exec(problem["source"], scope)
        forward = scope["forward"]
        ref = forward(*[tensors[n].double() for n in names])
        args_fp32 = [tensors[n] for n in names]
        eager_ms = gpu.time(lambda: forward(*args_fp32), runs)
    except Exception as e:
        traceback.print_exc()
        return [dict(problem=name, idea="(reference)", verdict="ERROR", note=str(e)[:160])]
    rows = []
    out_name = problem["outputs"][0]["name"]
    for idea, src in cands:
        row = dict(problem=name, idea=idea, eager=eager_ms, prec=precision_of(src))
        rows.append(row)
        build = builds.get((name, idea))
        if isinstance(build, Exception):
            row.update(verdict="ERROR", note="compile: %s" % build)
            continue
        try:
            out = torch.full(ref.shape, float("nan"), dtype=torch.float32, device=gpu.dev)
            run = gpu.launcher(build[0], parse_launches(src), dict(tensors, **{out_name: out}), parse_scratch(src))
            run()
            torch.cuda.synchronize()
            row["err"] = gpu.scaled_error(out, ref)
            tol = STRICT if row["prec"] in ("fp32", "tf32x3") else LOOSE
            row["verdict"] = "pass" if row["err"] <= tol else "FAIL"
            row["ms"] = gpu.time(run, runs)
            row["note"] = build[1]
        except Exception as e:
            row.update(verdict="ERROR", note=("%s: %s" % (type(e).__name__, e))[:160])
            torch.cuda.synchronize()
    return rows


def builtin_main(args):
    t0 = time.time()
    workdir = tempfile.mkdtemp(prefix="kf-builtin-bench-")
    rendered = render_builtin(find_cli(args.cli), args.builtin, args.points, os.path.join(workdir, "rendered"))
    gpu = Gpu()
    torch = gpu.torch
    print("GPU: %s   torch %s   cupy %s" % (torch.cuda.get_device_name(), torch.__version__, gpu.cupy.__version__))
    builds = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(16, os.cpu_count() or 4)) as pool:
        futures = {pool.submit(compile_cubin, src, workdir, "%s__%s" % (name, idea)): (name, idea)
                   for name, (problem, cands) in rendered.items() for idea, src in cands}
        for fut in concurrent.futures.as_completed(futures):
            try:
                builds[futures[fut]] = fut.result()
            except Exception as e:
                builds[futures[fut]] = e
    print("compiled %d candidates in %.1f s" % (len(builds), time.time() - t0))

    rows = []
    for name, (problem, cands) in rendered.items():
        rows += bench_problem(gpu, name, problem, cands, builds, args.runs)
        torch.cuda.empty_cache()  # the problem's tensors are gone with bench_problem's frame

    print("\n%-20s %-26s %-7s %10s %10s %8s %10s %-7s %s" % ("problem", "idea", "prec", "ms", "eager ms", "speedup",
                                                             "max err", "verdict", "notes"))
    for r in rows:
        ms, eager = r.get("ms"), r.get("eager")
        print("%-20s %-26s %-7s %10s %10s %8s %10s %-7s %s" % (
            r["problem"], r["idea"], r.get("prec", "-"), "%.4f" % ms if ms else "-", "%.4f" % eager if eager else "-",
            "%.2fx" % (eager / ms) if ms and eager else "-", "%.2e" % r["err"] if r.get("err") is not None else "-",
            r.get("verdict", "-"), r.get("note", "")))
    bad = [r for r in rows if r.get("verdict") != "pass"]
    print("\n%d candidates of %d problems, %d not passing, %.0f s; strict %.0e / loose %.0e on "
          "max |out-ref|/(|ref|+rms(ref))" % (len(rows), len(rendered), len(bad), time.time() - t0, STRICT, LOOSE))
    shutil.rmtree(workdir, ignore_errors=True)
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer parameter points")
    ap.add_argument("--only", default="", help="only variants whose problem or template contains this")
    ap.add_argument("--label", default="", help="only parameter points whose label matches this regular expression")
    ap.add_argument("--runs", type=int, default=50, help="timed runs per variant (median reported)")
    ap.add_argument("--sass", action="store_true", help="count HMMA/FFMA/LDSM in the SASS (cuobjdump)")
    ap.add_argument("--render-only", metavar="DIR", help="write rendered variants to DIR and exit (no GPU)")
    ap.add_argument("--builtin", nargs="*", metavar="PROBLEM", help="the built-in generator's candidates for these "
                    "problem files or folders (default: tests/builtin/data/problems)")
    ap.add_argument("--cli", help="kernelforge-cli for --builtin (default: $KERNELFORGE_CLI, build-gpu/, build/)")
    ap.add_argument("--points", type=int, default=1, help="--builtin: parameter points per idea, best first")
    args = ap.parse_args()
    if args.builtin is not None:
        return builtin_main(args)

    todo = [v for v in variants(args.quick, args.only) if re.search(args.label, v[4])]
    rendered = []
    for i, (name, kind, sizes, fam, label, params) in enumerate(todo):
        try:
            src = render(fam, params)
            launches = parse_launches(src)
            parse_scratch(src)
            rendered.append((i, src, launches, None))
        except Exception as e:  # a template or parameter mistake: reported in the table
            rendered.append((i, None, None, "render: %s" % e))

    if args.render_only:
        os.makedirs(args.render_only, exist_ok=True)
        for (i, src, launches, err), (name, kind, sizes, fam, label, params) in zip(rendered, todo):
            tag = "%02d_%s_%s_%s" % (i, re.sub(r"\W+", "_", name), fam[:-3], re.sub(r"\W+", "_", label))
            if err:
                print("%-60s %s" % (tag, err))
                continue
            with open(os.path.join(args.render_only, tag + ".cu"), "w") as f:
                f.write(src)
            print("%-60s %s" % (tag, "; ".join("%s grid%s block%s smem %d" % (k, tuple(g), tuple(b), s)
                                                   for k, g, b, s, _ in launches)))
        return 0

    t0 = time.time()
    gpu = Gpu()
    torch = gpu.torch
    print("GPU: %s   torch %s   cupy %s" % (torch.cuda.get_device_name(), torch.__version__, gpu.cupy.__version__))
    workdir = tempfile.mkdtemp(prefix="kf-template-bench-")

    # Compile everything in parallel first.
    builds = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(16, os.cpu_count() or 4)) as pool:
        futures = {pool.submit(compile_cubin, src, workdir, "v%02d" % i): i for i, src, _, err in rendered if not err}
        for fut in concurrent.futures.as_completed(futures):
            i = futures[fut]
            try:
                builds[i] = fut.result()
            except Exception as e:
                builds[i] = e
    print("compiled %d variants in %.1f s" % (len(builds), time.time() - t0))

    rows = []
    by_problem = {}
    for (i, src, launches, err), (name, kind, sizes, fam, label, params) in zip(rendered, todo):
        row = dict(problem=name, family=fam[:-3], params=label, prec=precision_of(src) if src else "?",
                   ms=None, tflops=None, err=None, verdict="", note=err or "")
        rows.append(row)
        if err:
            row["verdict"] = "ERROR"
            continue
        build = builds.get(i)
        if isinstance(build, Exception):
            row["verdict"], row["note"] = "ERROR", "compile: %s" % build
            continue
        cubin, info = build
        row["note"] = info + ("  " + sass_counts(cubin) if args.sass else "")
        try:
            if name not in by_problem:
                tensors, ref, eager = gpu.make(kind, sizes)
                by_problem[name] = (tensors, ref, eager)
            tensors, ref, eager = by_problem[name]
            out = torch.full(ref.shape, float("nan"), dtype=torch.float32, device=gpu.dev)
            run = gpu.launcher(cubin, launches, dict(tensors, out=out), parse_scratch(src))
            run()
            torch.cuda.synchronize()
            e = gpu.scaled_error(out, ref)
            tol = STRICT if row["prec"] in ("fp32", "tf32x3") else LOOSE
            row["err"] = e
            row["verdict"] = ("pass" if e <= tol else "FAIL") + (" strict" if tol == STRICT else " loose")
            if not name.startswith("check"):
                row["ms"] = gpu.time(run, args.runs)
                row["tflops"] = flops(kind, sizes) / (row["ms"] * 1e-3) / 1e12
        except Exception as e:
            row["verdict"] = "ERROR"
            row["note"] = ("%s: %s" % (type(e).__name__, e))[:160]
            traceback.print_exc()
            torch.cuda.synchronize()

    # PyTorch in the same run.
    for name, (tensors, ref, eager) in by_problem.items():
        if name.startswith("check"):
            continue
        kind = next(k for n, k, *_ in problems() if n == name)
        sizes = next(s for n, k, s, *_ in problems() if n == name)
        for label, tf32 in (("eager (default flags)", None), ("eager, TF32 off", False), ("eager, TF32 on", True)):
            try:
                old = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
                if tf32 is not None:
                    torch.backends.cuda.matmul.allow_tf32 = tf32
                    torch.backends.cudnn.allow_tf32 = tf32
                out = eager(tensors)
                e = gpu.scaled_error(out, ref)
                ms = gpu.time(lambda: eager(tensors), args.runs)
                torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = old
                rows.append(dict(problem=name, family="torch", params=label, prec="-", ms=ms,
                                 tflops=flops(kind, sizes) / (ms * 1e-3) / 1e12, err=e,
                                 verdict="pass strict" if e <= STRICT else ("pass loose" if e <= LOOSE else "FAIL"), note=""))
            except Exception as e:
                rows.append(dict(problem=name, family="torch", params=label, prec="-", ms=None, tflops=None,
                                 err=None, verdict="ERROR", note=str(e)[:120]))

    print()
    print("%-22s %-28s %-26s %-7s %9s %8s %10s %-12s %s" % ("problem", "family", "params", "prec", "ms", "TFLOP/s",
                                                          "max err", "verdict", "notes"))
    for r in sorted(rows, key=lambda r: (r["problem"], r["family"] == "torch")):
        print("%-22s %-28s %-26s %-7s %9s %8s %10s %-12s %s" % (
            r["problem"], r["family"], r["params"], r["prec"],
            "%.4f" % r["ms"] if r["ms"] is not None else "-",
            "%.1f" % r["tflops"] if r["tflops"] is not None else "-",
            "%.2e" % r["err"] if r["err"] is not None else "-", r["verdict"], r["note"]))
    print("\n%d variants, %.0f s; tolerance strict %.0e / loose %.0e on max |out-ref|/(|ref|+rms(ref))" % (
        len(todo), time.time() - t0, STRICT, LOOSE))
    shutil.rmtree(workdir, ignore_errors=True)
    return 0


def flops(kind, s):
    if kind in ("gemm", "gemm_uniform", "linear"):
        return 2.0 * s["m"] * s["n"] * s["k"]
    if kind == "bmm":
        return 2.0 * s["l"] * s["m"] * s["n"] * s["k"]
    oh = (s["h"] + 2 * s["pad"] - s["r"]) // s["stride"] + 1
    ow = (s["w"] + 2 * s["pad"] - s["s"]) // s["stride"] + 1
    return 2.0 * s["b"] * s["oc"] * oh * ow * s["c"] * s["r"] * s["s"]


if __name__ == "__main__":
    sys.exit(main())
