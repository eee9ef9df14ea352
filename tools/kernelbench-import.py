#!/usr/bin/env python3
"""Turns KernelBench-style problem files into KernelForge problems.

Usage: kernelbench-import.py SOURCE... -o OUT_DIR [--policy strict|loose] [--seed N] [--device cpu|cuda]
                             [--jobs N] [--timeout SECONDS]

A SOURCE is a Python file or a folder of them (every *.py, sorted). Each file must define
`class Model(nn.Module)`, `get_inputs()` and `get_init_inputs()`, as KernelBench's do. For each
file this builds `Model(*get_init_inputs())` in eval mode, records the shapes, dtypes and
distributions of `get_inputs()`, scripts the model (or traces it when scripting fails), and writes
OUT_DIR/NAME.pt (the TorchScript module with its parameters) and OUT_DIR/NAME.toml (the problem:
tensors, the parameters forward reads, the module's file, and the original source for prompts).
Every file is imported in a process of its own, so memory does not grow with the folder and a
file that crashes or runs out of memory costs only itself. docs/kernelbench.md describes the
result. Files that cannot be converted are listed with the reason, one line each; the exit
status is 0 when all converted, 1 when some did not, 2 on bad usage.
"""
import argparse
import atexit
import concurrent.futures
import copy
import inspect
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import traceback
import types
import warnings

# Checking the scripted module against the eager model runs both on the CPU when there is no GPU;
# above this many input elements that would take minutes, so only shapes are derived then (the
# worker runs the module when it loads the problem, and says if it fails).
CPU_CHECK_ELEMENTS = 1 << 24
SAMPLE = 1 << 20  # elements looked at to name an input's distribution
# get_inputs() that computes with what it draws (`torch.rand(n) * 2 - 1`) runs for real only up to
# this many elements; above, it runs again with every drawn tensor at most SAMPLE_ELEMENTS large.
REAL_ELEMENTS = 1 << 26
SAMPLE_ELEMENTS = 1 << 22
# A model that must be traced needs real inputs; on the CPU only up to this many bytes of them.
CPU_TRACE_BYTES = 4 << 30
COMPARE_CHUNK = 1 << 24  # elements compared at a time (float64 copies of a 6 GB output do not fit)


class Failure(Exception):
    """A file that cannot be converted; the message is the reason shown to the user."""


def where(path, exc):
    """file:line of the deepest frame of `exc` inside `path`, else just the file."""
    line = None
    if isinstance(exc, SyntaxError) and exc.filename == path:
        line = exc.lineno
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == path:
            line = frame.lineno
    return f"{path}:{line}" if line else path


def first_line(exc):
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


def load_source(path):
    with open(path, encoding="utf-8") as f:
        source = f.read()
    try:
        code = compile(source, path, "exec")
    except SyntaxError as e:
        raise Failure(f"{path}:{e.lineno}: syntax error: {e.msg}")
    # TorchScript names the model's class after this module ("__torch__.kb_19_ReLU.Model"), and a
    # name that starts with a digit would not load again.
    module = types.ModuleType("kb_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0]))
    module.__file__ = path
    # Registered, as an imported module would be: inspect (TorchScript's source lookup), pickling
    # and dataclasses find a class's module through sys.modules.
    sys.modules[module.__name__] = module
    try:
        exec(code, module.__dict__)
    except Exception as e:
        raise Failure(f"{where(path, e)}: running the file failed: {first_line(e)}")
    import torch
    model = module.__dict__.get("Model")
    if not (isinstance(model, type) and issubclass(model, torch.nn.Module)):
        raise Failure(f"{path}: no `class Model(nn.Module)`")
    for fn in ("get_inputs", "get_init_inputs"):
        if not callable(module.__dict__.get(fn)):
            raise Failure(f"{path}: no `{fn}()` function")
    return source, module


def call(path, what, fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except Failure:
        raise
    except Exception as e:
        raise Failure(f"{where(path, e)}: {what} failed: {first_line(e)}")


def identifier(text):
    s = re.sub(r"\W", "_", text)
    return s if s and not s[0].isdigit() else "_" + s


def dtype_name(dtype):
    import torch
    names = {torch.float32: "float32", torch.float16: "float16", torch.bfloat16: "bfloat16",
             torch.float64: "float64", torch.int32: "int32", torch.int64: "int64", torch.bool: "bool"}
    if dtype not in names:
        raise Failure(f"dtype {dtype} is not one KernelForge handles ({', '.join(names.values())})")
    return names[dtype]


def nbytes(shape, dtype):
    import torch
    return math.prod(shape) * torch.empty((), dtype=dtype).element_size()


def gigabytes(n):
    return f"{n / 2**30:.1f} GB"


class InputSpec:
    """One tensor of get_inputs(): shape, dtype, the distribution KernelForge draws it from, and
    how to make an equivalent one for the checks (`make(device)`)."""

    def __init__(self, shape, dtype, dist, make, note=None):
        self.shape, self.dtype, self.dist, self.make, self.note = shape, dtype, dist, make, note


class ConstantSpec:
    """A number among get_inputs()'s items (`A * s` with s = 3.14): the problem's forward takes only
    tensors, so the number is fixed in the module as the value get_inputs() returned."""

    def __init__(self, value):
        self.value, self.note = value, None


def is_number(x):
    return isinstance(x, (bool, int, float)) and not isinstance(x, complex)


def drawer(shape, dtype, dist):
    """make(device) for an input drawn as KernelForge draws it: what the checks run on when the
    file's own values are not at hand."""
    import torch

    def make(device):
        if dtype == torch.bool:
            return torch.rand(shape, device=device) < 0.5
        if not dtype.is_floating_point:
            return torch.randint(0, 1000, shape, dtype=dtype, device=device)
        if dist == "normal":
            t = torch.randn(shape, device=device)
        elif dist == "lognormal":
            t = torch.randn(shape, device=device).exp_()
        elif dist == "exponential":
            t = torch.empty(shape, device=device).exponential_()
        else:
            t = torch.rand(shape, device=device)
        return t.to(dtype)
    return make


def split_size(name, args, kwargs):
    """(leading arguments, size, other keywords) of a call of torch.<name>: rand(2, 3),
    rand((2, 3)), rand(size=(2, 3)), randint(10, (2, 3)), randint(0, 10, size=(2, 3)),
    full((2, 3), 7.0)."""
    kwargs = dict(kwargs)
    if "size" in kwargs:
        return list(args), list(kwargs.pop("size")), kwargs
    if name == "randint":
        return list(args[:-1]), list(args[-1]), kwargs
    if name == "full":
        if len(args) > 1:
            kwargs["fill_value"] = args[1]
        return [], list(args[0]), kwargs
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return [], list(args[0]), kwargs
    return [], list(args), kwargs


def randint_bounds(numbers, kwargs):
    low = kwargs.get("low", numbers[0] if len(numbers) >= 2 else 0)
    high = kwargs.get("high", numbers[-1] if numbers else None)
    return (int(low), int(high)) if high is not None else None


class Factories:
    """While get_inputs() runs, torch.rand / randn / randint remember how each tensor was drawn,
    and those, zeros / ones / empty / full (and the _like forms) ignore the device they are asked
    for, as `.cuda()` and `.to("cuda")` leave tensors where they are: a file that makes its inputs
    on the GPU imports on any machine. In "meta" mode the tensors are made on the meta device: a
    problem sized for a large GPU imports in a second, without gigabytes of random numbers on the
    CPU. In "sample" mode they are real, with every dimension cut to `limit`: the values of tensors
    computed from the drawn ones can then be looked at. In "real" mode they are real, whole, on the
    CPU."""

    DRAWN = {"rand": "uniform", "randn": "normal", "randint": "randint"}
    CONSTANT = ("zeros", "ones", "empty", "full")

    def __init__(self, mode, limit=None):
        self.mode, self.limit = mode, limit
        self.made, self.shapes = [], []

    def __enter__(self):
        import torch
        self.saved = []
        self.original_to = torch.Tensor.to
        for name in list(self.DRAWN) + list(self.CONSTANT):
            kind = self.DRAWN.get(name)
            self.patch(torch, name, self.sized(getattr(torch, name), name, kind))
            self.patch(torch, name + "_like", self.like(getattr(torch, name + "_like"), kind))
        self.patch(torch.Tensor, "cuda", lambda t, *a, **k: t)
        self.patch(torch.Tensor, "to", self.stay(torch.Tensor.to))
        return self

    def patch(self, owner, name, value):
        self.saved.append((owner, name, owner.__dict__.get(name)))
        setattr(owner, name, value)

    def __exit__(self, *exc):
        for owner, name, original in reversed(self.saved):
            if original is None:
                delattr(owner, name)  # it was inherited (Tensor.cuda comes from the C++ base)
            else:
                setattr(owner, name, original)
        return False

    @staticmethod
    def stay(original):
        import torch

        def to(t, *args, **kwargs):
            kwargs.pop("device", None)
            if args and isinstance(args[0], torch.Tensor):  # .to(other): its dtype only
                kwargs.setdefault("dtype", args[0].dtype)
                args = args[1:]
            args = [a for a in args if not isinstance(a, (str, torch.device))]
            if not args and "dtype" not in kwargs:
                return t
            return original(t, *args, **kwargs)
        return to

    def sized(self, original, name, kind):
        def factory(*args, **kwargs):
            kwargs.pop("generator", None)
            kwargs.pop("device", None)
            lead, size, rest = split_size(name, args, kwargs)
            self.shapes.append(size)
            if self.mode == "sample":
                size = [min(int(d), self.limit) for d in size]
            rest["device"] = "meta" if self.mode == "meta" else "cpu"
            t = original(*lead, size=tuple(size), **rest)
            if kind:
                bounds = randint_bounds([a for a in lead if isinstance(a, int)], rest) if kind == "randint" else None
                self.made.append((t, kind, bounds))
            return t
        return factory

    def like(self, original, kind):
        def factory(like, *args, **kwargs):
            kwargs.pop("generator", None)
            kwargs.pop("device", None)
            if self.mode == "meta" and not like.is_meta:
                like = self.original_to(like, "meta")
            t = original(like, *args, **kwargs)
            if kind:
                bounds = randint_bounds([a for a in args if isinstance(a, int)], kwargs) if kind == "randint" else None
                self.made.append((t, kind, bounds))
            return t
        return factory

    def spec(self, t):
        for made, kind, bounds in self.made:
            if made is t:
                return kind, bounds
        return None

    def kinds(self):
        return {kind for _, kind, _ in self.made}


def as_inputs(path, result):
    import torch
    if isinstance(result, torch.Tensor):
        result = [result]
    if not isinstance(result, (list, tuple)) or not result:
        raise Failure(f"{path}: get_inputs() must return a non-empty list of tensors")
    for i, x in enumerate(result):
        if not isinstance(x, torch.Tensor) and not is_number(x):
            raise Failure(f"{path}: get_inputs() item {i} is a {type(x).__name__}, neither a tensor nor a number")
    if all(is_number(x) for x in result):
        raise Failure(f"{path}: get_inputs() returns no tensor")
    return list(result)


def input_specs(path, module, seed):
    """The inputs' specs. get_inputs() runs first with every drawn tensor on the meta device: that
    gives every shape and dtype, and the distribution of each tensor it returns as drawn. A tensor
    it computed from drawn ones is looked at in a real run when the inputs are small, else in a run
    with the drawn tensors cut down (its shape stays the declared one). When get_inputs() cannot
    run on meta tensors (it reads values), it runs for real."""
    import torch
    meta, drawn = None, []
    try:
        with Factories("meta") as factories:
            torch.manual_seed(seed)
            meta = module.get_inputs()
    except Exception:
        pass  # it reads values: only a real run can tell
    if meta is not None:
        meta = as_inputs(path, meta)
        drawn = [ConstantSpec(x) if is_number(x) else
                 meta_spec(path, i, x, *factories.spec(x)) if factories.spec(x) else None
                 for i, x in enumerate(meta)]
        if None not in drawn:
            return drawn
        if sum(x.numel() for x in meta if not is_number(x)) > REAL_ELEMENTS:
            return sampled_specs(path, module, seed, meta, drawn, factories)
    torch.manual_seed(seed)
    with Factories("real"):
        inputs = as_inputs(path, call(path, "get_inputs()", module.get_inputs))
    specs = []
    for i, x in enumerate(inputs):
        if is_number(x):
            specs.append(ConstantSpec(x))
            continue
        # A drawn input keeps how it was drawn; the others are named from their values.
        known = drawn[i] if len(drawn) == len(inputs) else None
        dist, note = (known.dist, None) if known else distribution(path, i, x)
        specs.append(InputSpec(list(x.shape), x.dtype, dist, lambda device, x=x: x.to(device), note))
    return specs


def sampled_specs(path, module, seed, meta, specs, factories):
    """Specs of the inputs get_inputs() computes from drawn tensors, when they are too large to
    compute: their values come from a run with every drawn dimension cut so that no drawn tensor
    has more than SAMPLE_ELEMENTS elements."""
    import torch
    rank = max([len(s) for s in factories.shapes] or [1])
    limit = max(2, int(SAMPLE_ELEMENTS ** (1.0 / max(rank, 1))))
    sample = None
    try:
        with Factories("sample", limit):
            torch.manual_seed(seed)
            sample = as_inputs(path, module.get_inputs())
    except Exception:
        pass  # the sizes matter to it (a reshape to the declared size): no sample
    for i, x in enumerate(meta):
        if specs[i] is not None:
            continue
        shape, dtype = list(x.shape), x.dtype
        if sample is not None and i < len(sample) and sample[i].dtype == dtype and sample[i].numel() > 0:
            dist, note = distribution(path, i, sample[i])
            if note:
                note += " (values seen in a run of get_inputs() at a smaller size)"
        else:
            dist = "normal" if "normal" in factories.kinds() else "uniform"
            note = (f"input {i} of get_inputs() is computed from drawn tensors, too large to compute "
                    f"here ({gigabytes(nbytes(shape, dtype))}) and not computable at a smaller size; "
                    f"KernelForge draws it {dist}")
        specs[i] = InputSpec(shape, dtype, dist, drawer(shape, dtype, dist), note)
    return specs


def meta_spec(path, index, x, kind, bounds):
    shape, dtype = list(x.shape), x.dtype
    if kind == "randint":
        lo, hi = bounds if bounds else (0, 0)
        # The worker draws integer inputs from [0, 1000); indices into a smaller range would fail.
        if lo < 0 or hi < 1000:
            raise Failure(f"{path}: input {index} is drawn by randint from [{lo}, {hi}); "
                          "KernelForge draws integer inputs from [0, 1000)")
        return InputSpec(shape, dtype, "uniform", drawer(shape, dtype, "uniform"))
    return InputSpec(shape, dtype, kind, drawer(shape, dtype, kind))


def distribution(path, index, t):
    """The distribution get_inputs() drew `t` from, as KernelForge names them, with a note when
    the values fit none of them well."""
    import torch
    if t.dtype == torch.bool:
        return "uniform", None
    if not t.is_floating_point():
        lo, hi = int(t.min()), int(t.max())
        if lo < 0 or hi >= 1000 or hi < 900:
            raise Failure(f"{path}: input {index} is an integer tensor with values in [{lo}, {hi}]; "
                          "KernelForge draws integer inputs from [0, 1000)")
        return "uniform", None
    s = t.detach().flatten()[:SAMPLE].double().cpu()
    lo, hi, mean = float(s.min()), float(s.max()), float(s.mean())
    std = float(s.std()) if s.numel() > 1 else 0.0
    if lo >= 0 and hi < 1 and abs(mean - 0.5) < 0.05:
        return "uniform", None
    if abs(mean) < 0.05 and abs(std - 1) < 0.05:
        return "normal", None
    if lo > 0 and abs(mean - math.exp(0.5)) < 0.1:
        return "lognormal", None
    if lo >= 0 and abs(mean - 1) < 0.05 and abs(std - 1) < 0.05:
        return "exponential", None
    own = "uniform" if lo >= 0 else "normal"
    return own, (f"input {index} of get_inputs() has values in [{lo:.3g}, {hi:.3g}] (mean {mean:.3g}, "
                 f"std {std:.3g}); KernelForge draws it {own} first")


def parameter_init(model, path, t):
    """How PyTorch initialises the parameter at `path` ("conv.weight"), for trials after the first:
    (init, extra keys)."""
    import torch
    owner_path, _, leaf = path.rpartition(".")
    owner = model.get_submodule(owner_path) if owner_path else model
    nn = torch.nn
    fan_layers = (nn.Linear, nn.Bilinear, nn.Conv1d, nn.Conv2d, nn.Conv3d,
                  nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)
    if isinstance(owner, fan_layers) and leaf in ("weight", "bias"):
        weight = owner.weight
        fan_in, _ = nn.init._calculate_fan_in_and_fan_out(weight)
        return "fan_in_uniform", {"fan_in": int(fan_in)}
    if not t.is_floating_point():
        return "zeros", {}
    v = t.detach().double().flatten()
    if v.numel() and bool((v == 1).all()):
        return "ones", {}
    if v.numel() and bool((v == 0).all()):
        return "zeros", {}
    lo, hi = float(v.min()), float(v.max())
    mean = float(v.mean())
    std = float(v.std()) if v.numel() > 1 else 0.0
    # Uniform values have std (hi - lo) / sqrt(12); normal ones spread wider for their std.
    if v.numel() > 16 and std > 0 and abs(std - (hi - lo) / math.sqrt(12)) < 0.1 * std:
        return "uniform", {"low": lo, "high": hi}
    return "normal", {"low": mean, "high": std if std > 0 else 1.0}


def lower_graph(graph, root):
    """Inlines forward, turns the module's non-tensor attributes into constants and folds what
    they decide (as the worker does, core/reference/module_graph.cpp). Returns the paths of the
    tensors forward still reads, in order of first use."""
    import torch
    objects = {graph.inputs().__next__().debugName(): ("", root)}
    tensors = []
    for node in list(graph.findAllNodes("prim::GetAttr", True)):
        source = node.input().debugName()
        if source not in objects:
            raise Failure(f"forward reads attribute `{node.s('name')}` of something other than the model")
        prefix, obj = objects[source]
        name = node.s("name")
        attr_path = f"{prefix}.{name}" if prefix else name
        value = getattr(obj, name)
        if isinstance(value, torch.nn.Module):
            objects[node.output().debugName()] = (attr_path, value)
        elif isinstance(value, torch.Tensor):
            tensors.append((node, attr_path))
        else:
            with graph.insert_point_guard(node):
                constant = graph.insertConstant(value)
            node.output().replaceAllUsesWith(constant)
    eliminate_exceptions(graph)
    torch._C._jit_pass_constant_propagation(graph)
    torch._C._jit_pass_dce(graph)
    drop_dead_loops(graph)
    torch._C._jit_pass_dce(graph)
    alive = {n for n in graph.findAllNodes("prim::GetAttr", True)}
    used = []
    for node, attr_path in tensors:
        if node in alive and attr_path not in used:
            used.append(attr_path)
    return used


def eliminate_exceptions(graph):
    """An `if` whose one branch only raises (an input-shape check) is taken to go the other way, as
    libtorch's EliminateExceptions does: the shapes are fixed and were checked by a real run."""
    def raises(block):
        return any(n.kind() == "prim::RaiseException" for n in block.nodes())
    for node in list(graph.findAllNodes("prim::If", True)):
        blocks = list(node.blocks())
        if len(blocks) != 2 or raises(blocks[0]) == raises(blocks[1]):
            continue
        with graph.insert_point_guard(node):
            constant = graph.insertConstant(not raises(blocks[0]))
        node.replaceInput(0, constant)


def drop_dead_loops(graph):
    """A loop left from a check whose `raise` is gone (F.group_norm's batch-size check) computes
    only numbers nobody reads; DCE keeps loops, so drop such ones (as the worker does)."""
    def pure(block):
        for n in block.nodes():
            if n.kind() in ("prim::RaiseException", "prim::SetAttr", "prim::Print"):
                return False
            if any(o.type().isSubtypeOf(torch_tensor_type()) for o in n.outputs()):
                return False
            if not all(pure(b) for b in n.blocks()):
                return False
        return True
    for node in list(graph.nodes()):
        if node.kind() == "prim::Loop" and not any(o.uses() for o in node.outputs()) and pure(next(node.blocks())):
            node.destroy()


def torch_tensor_type():
    import torch
    return torch._C.TensorType.get()


def outputs_of(path, result, what):
    import torch
    outs = list(result) if isinstance(result, (tuple, list)) else [result]
    for i, o in enumerate(outs):
        if not isinstance(o, torch.Tensor):
            raise Failure(f"{path}: {what} returns a {type(o).__name__} (output {i}); KernelForge problems return tensors")
    if not outs:
        raise Failure(f"{path}: {what} returns nothing")
    return outs


def meta_copy(model):
    """The model with every parameter and buffer on the meta device, made without copying their
    values (a deep copy first would double the memory of a large model)."""
    import torch
    memo = {}
    for t in list(model.parameters()) + list(model.buffers()):
        m = torch.empty_like(t, device="meta")
        memo[id(t)] = torch.nn.Parameter(m, requires_grad=t.requires_grad) if isinstance(t, torch.nn.Parameter) else m
    return copy.deepcopy(model, memo)


def output_specs(model, specs):
    """Output shapes and dtypes without computing anything (the meta device); None when an op has
    no meta implementation."""
    import torch
    try:
        with torch.no_grad():
            outs = meta_copy(model)(*[torch.empty(s.shape, dtype=s.dtype, device="meta") for s in specs])
        outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
        return [(list(o.shape), o.dtype) for o in outs]
    except Exception:
        return None  # a real run says what is wrong


def same_result(a, b):
    """The module computes what the model does. Not bit for bit: on a GPU, cuDNN may pick another
    algorithm (TF32 by default) for the second run; a wrong trace is off by far more. Compared a
    chunk at a time, so that an output of gigabytes needs no float64 copy of itself."""
    import torch
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if not a.is_floating_point():
        return torch.equal(a, b)
    a, b = a.reshape(-1), b.reshape(-1)

    def pieces():
        for i in range(0, b.numel(), COMPARE_CHUNK):
            yield a[i:i + COMPARE_CHUNK].double(), b[i:i + COMPARE_CHUNK].double()

    squares, count = 0.0, 0
    for x, y in pieces():
        finite = torch.isfinite(y)
        if not torch.equal(finite, torch.isfinite(x)):
            return False
        squares += float(y[finite].pow(2).sum())
        count += int(finite.sum())
    if count == 0:
        return True
    rms = math.sqrt(squares / count)
    for x, y in pieces():
        finite = torch.isfinite(y)
        if not bool(((x[finite] - y[finite]).abs() <= 1e-2 * (y[finite].abs() + rms)).all()):
            return False
    return True


def script_or_trace(path, model, trace_inputs):
    """The model as TorchScript: scripted, or traced on `trace_inputs()` when scripting fails."""
    import torch
    try:
        return torch.jit.script(model), "script", None
    except Exception as e:
        script_error = first_line(e)
    try:
        inputs = trace_inputs(script_error)
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            traced = torch.jit.trace(model, tuple(inputs), check_trace=False)
        return traced, "trace", script_error
    except Failure:
        raise
    except Exception as e:
        raise Failure(f"{where(path, e)}: the model can be neither scripted ({script_error}) "
                      f"nor traced ({first_line(e)})")


def python_literal(v):
    if isinstance(v, float) and not math.isfinite(v):
        return f'float("{v}")'
    return repr(v)


def with_constants(path, model, names, constants):
    """`model` with the numbers among its inputs fixed: a module whose forward takes only the
    tensors and calls the model with those numbers. Its source is a file of its own, since
    TorchScript reads a class's source."""
    import importlib.util
    import torch
    call_args = [python_literal(constants[i]) if i in constants else n for i, n in enumerate(names)]
    tensors = [n for i, n in enumerate(names) if i not in constants]
    source = ("import torch\n\n\nclass WithConstants(torch.nn.Module):\n"
              "    def __init__(self, model):\n        super().__init__()\n        self.model = model\n\n"
              f"    def forward(self, {', '.join(tensors)}):\n"
              f"        return self.model({', '.join(call_args)})\n")
    # Each file imports in a process of its own: the folder goes when that process ends.
    folder = tempfile.mkdtemp(prefix="kernelbench-constants-")
    atexit.register(shutil.rmtree, folder, True)
    file = os.path.join(folder, "with_constants.py")
    with open(file, "w", encoding="utf-8") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location("kernelbench_with_constants", file)
    wrapper = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = wrapper
    spec.loader.exec_module(wrapper)
    return call(path, "the model with its numbers fixed", lambda: wrapper.WithConstants(model)).eval()


def toml_number(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    return repr(v)


def toml_string(s):
    return json.dumps(s, ensure_ascii=False)


def toml_source(text):
    if "'''" not in text:
        return "'''\n" + text + ("" if text.endswith("\n") else "\n") + "'''"
    return '"""\n' + text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"') + '"""'


def init_arguments(path, module, seed):
    """get_init_inputs() as the arguments of Model(): a list or tuple (positional) or a dict
    (keywords)."""
    import torch
    torch.manual_seed(seed)
    with Factories("real"):
        init = call(path, "get_init_inputs()", module.get_init_inputs)
    if isinstance(init, dict):
        return [], init
    if isinstance(init, (list, tuple)):
        return list(init), {}
    raise Failure(f"{path}: get_init_inputs() must return a list (of the arguments of Model()), "
                  f"not a {type(init).__name__}")


def convert(path, name, out_dir, args):
    import torch
    source, module = load_source(path)
    init_args, init_kwargs = init_arguments(path, module, args.seed)
    model = call(path, "Model(*get_init_inputs())", lambda: module.Model(*init_args, **init_kwargs)).eval()
    specs = input_specs(path, module, args.seed)

    params = list(inspect.signature(module.Model.forward).parameters.values())[1:]
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params) or len(params) < len(specs):
        input_names = [f"x{i}" for i in range(len(specs))]
    else:
        input_names = [identifier(p.name) for p in params[:len(specs)]]

    notes = [s.note for s in specs if s.note]
    constants = {i: s.value for i, s in enumerate(specs) if isinstance(s, ConstantSpec)}
    if constants:
        model = with_constants(path, model, input_names, constants)
        notes += [f"input {i} of forward (`{input_names[i]}`) is the number {v!r} that get_inputs() returns: "
                  "the problem fixes it" for i, v in constants.items()]
        specs = [s for i, s in enumerate(specs) if i not in constants]
        input_names = [n for i, n in enumerate(input_names) if i not in constants]
    device = args.device
    made = {}

    def make_inputs(where_to):
        # The same tensors for every use on one device: the eager run and the module's must agree.
        if where_to not in made:
            torch.manual_seed(args.seed)
            made[where_to] = [s.make(where_to) for s in specs]
        return made[where_to]

    elements = sum(math.prod(s.shape) for s in specs)
    input_bytes = sum(nbytes(s.shape, s.dtype) for s in specs)
    size = gigabytes(input_bytes)
    too_large = device == "cpu" and input_bytes > CPU_TRACE_BYTES
    check = device == "cuda" or elements <= CPU_CHECK_ELEMENTS
    outputs = output_specs(model, specs)
    eager = None
    if check or outputs is None:
        if too_large:
            raise Failure(f"{path}: its output shapes need a run of forward (an op has no meta implementation "
                          f"in PyTorch {torch.__version__}), and its inputs ({size}) are too large for this CPU; "
                          "import it on a GPU host (--device cuda)")
        model.to(device)  # in place: the scripted module made from it shares these tensors
        with torch.no_grad():
            eager = outputs_of(path, call(path, "forward", model, *make_inputs(device)), "forward")
        outputs = [(list(o.shape), o.dtype) for o in eager]

    def trace_inputs(script_error):
        if too_large:
            raise Failure(f"{path}: the model cannot be scripted ({script_error}), and tracing it needs its "
                          f"inputs ({size}), too large for this CPU; import it on a GPU host (--device cuda)")
        return make_inputs(device)

    saved, method, script_error = script_or_trace(path, model, trace_inputs)
    if method == "trace":
        notes.append(f"traced (scripting failed: {script_error}); control flow follows the recorded inputs")
    if eager is not None:
        with torch.no_grad():
            saved.to(device)
            done = "scripted" if method == "script" else "traced"
            got = outputs_of(path, call(path, f"the {done} module", saved, *make_inputs(device)),
                             f"the {done} module")
        for i, (a, b) in enumerate(zip(got, eager)):
            if not same_result(a, b):
                raise Failure(f"{path}: the {done} module's output {i} differs from the eager model's")
        del got, eager
    else:
        notes.append("not run here (too large for the CPU): the worker runs the module when it loads the problem")
    made.clear()
    saved = saved.cpu()

    graph = saved.inlined_graph
    try:
        used = lower_graph(graph, saved)
    except Failure as e:
        raise Failure(f"{path}: {e}")
    reserved = set(input_names)
    param_names = []
    for attr_path in used:
        n = identifier(attr_path.replace(".", "_"))
        while n in reserved:
            n = "p_" + n
        reserved.add(n)
        param_names.append(n)

    pt_name = name + ".pt"
    torch.jit.save(saved, os.path.join(out_dir, pt_name),
                   _extra_files={"kernelforge.json": json.dumps({"torch": torch.__version__, "source": os.path.basename(path)})})

    lines = [f"name = {toml_string(name)}"]
    # The class's own docstring: inspect.getdoc would give nn.Module's when the file has none.
    doc = inspect.cleandoc(module.Model.__dict__.get("__doc__") or "").split("\n\n")[0]
    summary = " ".join(doc.split())
    description = (summary + " " if summary else "") + f"(KernelBench-style file {os.path.basename(path)})"
    lines.append(f"description = {toml_string(description)}")
    lines.append(f"policy = {toml_string(args.policy)}")
    for note in notes:
        lines.append(f"# {note}")
    lines.append("")
    for spec, n in zip(specs, input_names):
        lines += ["[[inputs]]", f"name = {toml_string(n)}", f"shape = {spec.shape}",
                  f"dtype = {toml_string(dtype_name(spec.dtype))}", f"init = {toml_string(spec.dist)}", ""]
    state = dict(saved.named_parameters())
    state.update(dict(saved.named_buffers()))
    for attr_path, n in zip(used, param_names):
        t = state.get(attr_path)
        if t is None:
            t = saved
            for part in attr_path.split("."):
                t = getattr(t, part)
        init, extra = parameter_init(model, attr_path, t)
        lines += ["[[params]]", f"name = {toml_string(n)}", f"attribute = {toml_string(attr_path)}",
                  f"shape = {list(t.shape)}", f"dtype = {toml_string(dtype_name(t.dtype))}",
                  f"init = {toml_string(init)}"]
        lines += [f"{k} = {v!r}" for k, v in extra.items()]
        lines.append("")
    for i, (shape, dtype) in enumerate(outputs):
        out_name = "out" if len(outputs) == 1 else f"out{i}"
        lines += ["[[outputs]]", f"name = {toml_string(out_name)}", f"shape = {shape}",
                  f"dtype = {toml_string(dtype_name(dtype))}", ""]
    lines += ["[reference]", f"module = {toml_string(pt_name)}", f"torch = {toml_string(torch.__version__)}",
              f"method = {toml_string(method)}"]
    if constants:  # the saved module fixes them; the original Model (compile-baseline.py) takes them
        lines.append("numbers = [" + ", ".join(f"{{ position = {i}, value = {toml_number(v)} }}"
                                               for i, v in sorted(constants.items())) + "]")
    lines += [f"source = {toml_source(source)}", ""]
    toml_path = os.path.join(out_dir, name + ".toml")
    with open(toml_path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    return toml_path


def sources(paths):
    """(file, subfolder of the output) for each file to import: a folder's files keep their place
    below it (level1/19_ReLU.py -> OUT/level1/19_ReLU.toml)."""
    files = []
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, names in os.walk(p):
                dirs.sort()
                rel = os.path.relpath(root, p)
                files += [(os.path.join(root, n), "" if rel == "." else rel)
                          for n in sorted(names, key=natural) if n.endswith(".py")]
        else:
            files.append((p, ""))
    return files


def natural(name):
    # 2_gelu.py before 10_layernorm.py, as KernelBench numbers its problems
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def problem_name(path):
    # KernelBench names its files "19_ReLU.py"; a problem name is one word.
    return re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])


def one_line(text):
    return re.sub(r"\s*\n\s*", " ", text.strip())


def import_one(args):
    """In the process of one file: imports it and writes {"toml": path} or {"failed": reason} to
    args.result (the file's own prints go to stdout, which the parent does not read)."""
    try:
        outcome = {"toml": convert(args.one, args.name, args.out, args)}
    except Failure as e:
        outcome = {"failed": one_line(str(e))}
    except Exception as e:  # something the checks did not foresee
        outcome = {"failed": one_line(f"{where(args.one, e)}: {first_line(e)}")}
    with open(args.result, "w", encoding="utf-8") as f:
        json.dump(outcome, f)
    return 0


def run_one(path, name, out_dir, args):
    """Imports one file in a process of its own: (toml path, None) or (None, the reason)."""
    fd, result = tempfile.mkstemp(prefix="kernelbench-import-", suffix=".json")
    os.close(fd)
    command = [sys.executable, os.path.abspath(__file__), "--one", path, "--name", name, "--result", result,
               "-o", out_dir, "--policy", args.policy, "--seed", str(args.seed), "--device", args.device]
    try:
        p = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=args.timeout)
        with open(result, encoding="utf-8") as f:
            outcome = json.load(f) if os.path.getsize(result) else {}
    except subprocess.TimeoutExpired:
        return None, f"{path}: importing it took longer than {args.timeout:g} s (--timeout), so it was stopped"
    finally:
        os.remove(result)
    if "toml" in outcome or "failed" in outcome:
        return outcome.get("toml"), outcome.get("failed")
    if p.returncode < 0:
        sig = signal.Signals(-p.returncode).name
        hint = " (out of memory?)" if -p.returncode == signal.SIGKILL else ""
        return None, f"{path}: the process importing it was killed by {sig}{hint}"
    err = [line for line in p.stderr.decode("utf-8", "replace").splitlines() if line.strip()]
    return None, f"{path}: the process importing it exited with status {p.returncode}" + (f": {err[-1].strip()}" if err else "")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sources", nargs="*", help="KernelBench-style .py files or folders of them")
    ap.add_argument("-o", "--out", required=True, help="folder for the .toml and .pt files")
    ap.add_argument("--policy", choices=["strict", "loose"], default="strict")
    ap.add_argument("--seed", type=int, default=42, help="torch.manual_seed before building the model and the inputs")
    ap.add_argument("--device", choices=["cpu", "cuda"], help="where forward runs for the checks (default: cuda when present)")
    ap.add_argument("--jobs", type=int, default=1, help="files imported at once, each in a process of its own (default 1)")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds one file may take (default 1800)")
    ap.add_argument("--one", help=argparse.SUPPRESS)     # the process of one file: its path,
    ap.add_argument("--name", help=argparse.SUPPRESS)    # its problem name,
    ap.add_argument("--result", help=argparse.SUPPRESS)  # and where its outcome goes
    args = ap.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("kernelbench-import: needs PyTorch (pip install torch, or apt-get install python3-torch)", file=sys.stderr)
        return 2
    if args.one:
        return import_one(args)
    if not args.sources:
        ap.error("give at least one .py file or folder")
    if args.device is None:
        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    files = sources(args.sources)
    missing = [f for f, _ in files if not os.path.isfile(f)]
    if missing or not files:
        print(f"kernelbench-import: no such file: {', '.join(missing)}" if missing else
              "kernelbench-import: no .py files found", file=sys.stderr)
        return 2
    os.makedirs(args.out, exist_ok=True)
    names = {}
    failed = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        work = []
        for f, sub in files:
            name = problem_name(f)
            if name in names:
                work.append((f, f"{f}: its problem name {name} is already {names[name]}'s"))
                continue
            names[name] = f
            out_dir = os.path.join(args.out, sub)
            os.makedirs(out_dir, exist_ok=True)
            work.append((f, pool.submit(run_one, f, name, out_dir, args)))
        for f, job in work:  # in the files' order, each as soon as it and those before it are done
            toml_path, why = (None, job) if isinstance(job, str) else job.result()
            if why is None:
                print(f"ok      {f} -> {toml_path}")
            else:
                failed.append((f, why))
                print(f"FAILED  {why}")
            sys.stdout.flush()
    print(f"{len(files) - len(failed)} of {len(files)} files imported into {args.out}")
    for f, why in failed:
        print(f"  not imported: {why}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
