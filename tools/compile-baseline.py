#!/usr/bin/env python3
"""Eager and torch.compile times of a KernelForge problem, as KernelForge times them.

Usage: compile-baseline.py PROBLEM.toml [--trials 100] [--json]
       compile-baseline.py --serve [--trials 100]
With --serve it reads one problem file's path a line from stdin and answers each with the --json
line (without eager_ms), in one process: Python, PyTorch, CUDA and the compiler start once for
many problems (kernelforge-cli suite keeps one per GPU).
Inputs follow the problem file (uniform [0,1) inputs, PyTorch-style parameter initialisers);
each timed run follows a write of a buffer larger than the L2, and the median of `trials` is
reported. A module problem (tools/kernelbench-import.py) runs its original Python model, with the
parameters of its saved module, as KernelBench times torch.compile. Needs PyTorch with CUDA.
"""
import argparse, gc, json, math, os, sys, tomllib, types

import torch
import torch.nn.functional as F


class TorchNamespace:
    # The references are written for libtorch's TorchScript compiler, where some functional ops
    # (gelu, silu, avg_pool2d) are reachable as torch.<op>; Python keeps them in torch.nn.functional.
    def __getattr__(self, name):
        return getattr(torch, name) if hasattr(torch, name) else getattr(F, name)


def evaluate_shape(shape, constants):
    return [int(eval(str(d), {"__builtins__": {}}, dict(constants))) for d in shape]


def make_tensor(spec, constants, device, param):
    shape = evaluate_shape(spec["shape"], constants)
    dtype = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
             "float64": torch.float64, "int32": torch.int32, "int64": torch.int64,
             "bool": torch.bool}[spec.get("dtype", "float32")]
    init = spec.get("init", "fan_in_uniform" if param else "uniform")
    if init == "ones":
        t = torch.ones(shape, device=device)
    elif init == "zeros":
        t = torch.zeros(shape, device=device)
    elif init == "normal":
        t = torch.randn(shape, device=device) * spec.get("high", 1.0) + spec.get("low", 0.0)
    elif init == "fan_in_uniform":
        fan_in = spec.get("fan_in")
        fan_in = int(eval(str(fan_in), {"__builtins__": {}}, dict(constants))) if fan_in is not None else math.prod(shape[1:])
        b = 1.0 / math.sqrt(max(fan_in, 1))
        t = torch.rand(shape, device=device) * 2 * b - b
    else:
        t = torch.rand(shape, device=device) * (spec.get("high", 1.0) - spec.get("low", 0.0)) + spec.get("low", 0.0)
    # As the engine draws them: a bool true with probability 1/2, integers in [0, 1000).
    if dtype == torch.bool:
        return torch.rand(shape, device=device) < 0.5
    return t.to(dtype) if dtype.is_floating_point else (t * 1000).to(dtype)


def module_model(path, p):
    """The KernelBench model of a module problem: its Python source, built as the importer built
    it, with the saved module's parameters."""
    module = types.ModuleType("kb_model")
    exec(compile(p["reference"]["source"], path, "exec"), module.__dict__)
    torch.manual_seed(42)
    init = module.get_init_inputs()  # a list or tuple, or a dict of keywords, as the importer takes
    model = (module.Model(**init) if isinstance(init, dict) else module.Model(*init)).eval()
    saved = torch.jit.load(os.path.join(os.path.dirname(path), p["reference"]["module"]), map_location="cpu")
    model.load_state_dict(saved.state_dict(), strict=False)
    return model.cuda()


def with_numbers(model, numbers):
    """`model` called with the numbers among get_inputs()'s items at their positions ([reference]
    numbers: the saved module fixes them, the original Model takes them as arguments)."""
    if not numbers:
        return model
    fixed = {int(n["position"]): n["value"] for n in numbers}

    def forward(*tensors):
        args, rest = [], iter(tensors)
        for i in range(len(tensors) + len(fixed)):
            args.append(fixed[i] if i in fixed else next(rest))
        return model(*args)
    return forward


def median_ms(fn, trials):
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    times = []
    for i in range(trials):
        flush.fill_(i & 0xFF)
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]


def measure(path, trials, eager=True):
    """The eager and torch.compile times of one problem file, as the --json line's fields (the
    suite, which times eager PyTorch in its worker, asks for torch.compile's only)."""
    with open(path, "rb") as f:
        p = tomllib.load(f)
    constants = p.get("constants", {})
    torch.manual_seed(0)
    tensors = [make_tensor(s, constants, "cuda", False) for s in p.get("inputs", [])]
    if "module" in p["reference"]:
        forward = with_numbers(module_model(path, p), p["reference"].get("numbers", []))
    else:
        tensors += [make_tensor(s, constants, "cuda", True) for s in p.get("params", [])]
        scope = {"torch": TorchNamespace(), "Tensor": torch.Tensor, "List": list, "Tuple": tuple, "Optional": type(None)}
        exec("from typing import List, Tuple, Optional\n" + p["reference"]["source"], scope)
        forward = scope["forward"]
    result = {"problem": p["name"]}
    with torch.no_grad():
        if eager:
            result["eager_ms"] = median_ms(lambda: forward(*tensors), trials)
        try:
            compiled = torch.compile(forward)
            result["compile_ms"] = median_ms(lambda: compiled(*tensors), trials)
        except Exception as e:  # a problem torch.compile cannot take is reported, not fatal
            result["compile_error"] = str(e).splitlines()[0][:200]
    return result


def serve(trials):
    """One problem a line. Whatever else writes to stdout (the model's prints, a compiler's) goes to
    stderr, so that stdout carries only the answers."""
    sys.stdout.flush()
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    for line in sys.stdin:
        path = line.strip()
        if not path:
            continue
        try:
            result = measure(path, trials, eager=False)
        except Exception as e:
            result = {"error": f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"}
        # What one problem compiled and allocated is not the next one's.
        if "torch._dynamo" in sys.modules:
            sys.modules["torch._dynamo"].reset()
        gc.collect()
        torch.cuda.empty_cache()
        answers.write(json.dumps(result) + "\n")
        answers.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("problem", nargs="?")
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--serve", action="store_true", help="problem paths on stdin, one --json line each on stdout")
    args = ap.parse_args()
    if args.serve:
        return serve(args.trials)
    if not args.problem:
        ap.error("give a problem file, or --serve")
    result = measure(args.problem, args.trials)
    print(json.dumps(result) if args.json else result)


if __name__ == "__main__":
    sys.exit(main())
