"""A problem's facts from a run on the meta device: output shapes, FLOPs, bytes and the aten trace, no compute.

A forward that needs real values (data-dependent shapes, `.item()`) runs on the CPU instead when it is small.
`lp` is a kb_data.problems.LoadedProblem throughout (not imported: problems imports this module).
"""
from __future__ import annotations

import contextlib
import re
import weakref
from dataclasses import dataclass
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import flop_registry


@dataclass
class MetaResult:
    outputs: list | None = None
    flops: int | None = None
    min_bytes: int | None = None
    min_bytes_parts: dict | None = None
    trace: list | None = None
    state_dict: list | None = None
    inputs: list | None = None
    error: str | None = None
    device: str = "meta"  # "cpu" when a data-dependent forward had to run on real data


def dtype_name(dtype) -> str:
    return str(dtype).replace("torch.", "")


def build_model(lp, device: str = "cpu"):
    """Model(*get_init_inputs()) on a device, in the suite's mode (v3: eval, v0.1: train)."""
    mod = lp.module
    with torch.device(device):
        model = mod.Model(*mod.get_init_inputs())
    if lp.rules["model_mode"] == "eval":
        model.eval()
    return model


def meta_inputs(lp, generators: list | None = None) -> list:
    """get_inputs() as meta tensors: made on meta when possible, else on CPU and converted.

    When `generators` is a list it receives, per input, the factory that drew it
    (`randn`, `rand`, `randint(0,10)`, ...), `derived` when later ops changed it, else None.
    """
    mod = lp.module
    recorder = _FactoryRecorder()
    try:
        with torch.device("meta"), recorder:
            inputs = list(mod.get_inputs())
        if not all(not isinstance(x, torch.Tensor) or x.is_meta for x in inputs):
            raise RuntimeError("inputs left the meta device")
    except Exception:
        recorder = _FactoryRecorder()
        with recorder:
            inputs = [_to_meta(x) for x in mod.get_inputs()]
        recorder.produced = {}
    if generators is not None:
        generators.extend(recorder.generator_of(x) for x in inputs)
    return inputs


class _FactoryRecorder(TorchDispatchMode):
    RANDOM = {"randn": "randn", "rand": "rand", "randint": "randint", "normal_": "randn", "uniform_": "rand",
              "randperm": "randperm", "random_": "randint", "bernoulli": "bernoulli"}

    def __init__(self):
        super().__init__()
        # id -> (weak reference, label): an id outlives its tensor and is reused by the next one, so a lookup
        # checks that the tensor is still the one recorded (without it the labels of inputs varied run to run)
        self.produced: dict[int, tuple] = {}

    def _label(self, t) -> str | None:
        ref, label = self.produced.get(id(t), (None, None))
        return label if ref is not None and ref() is t else None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        base = func.__name__.split(".")[0]
        if base in self.RANDOM:
            gen = self.RANDOM[base]
            if base == "randint":
                ints = [a for a in args if isinstance(a, int)]
                gen = f"randint({ints[0]},{ints[1]})" if len(ints) >= 2 else f"randint(0,{ints[0]})" if ints else gen
            label = gen
        elif base in ("view", "_unsafe_view", "reshape", "alias", "detach", "_to_copy", "clone", "lift_fresh",
                      "expand", "contiguous") and args and isinstance(args[0], torch.Tensor):
            label = self._label(args[0]) or "derived"
        elif base in ("zeros", "ones", "full", "arange", "empty", "scalar_tensor", "tensor", "linspace"):
            label = "constant"
        else:  # transformed: keep the draw it came from, e.g. derived(randn) for normalize(randn(...))
            origins = [self._label(a) for a in args if isinstance(a, torch.Tensor)]
            draws = [o for o in origins if o and o not in ("constant", "derived")]
            base_draw = draws[0] if draws else None
            if base_draw and base_draw.startswith("derived("):
                base_draw = base_draw[len("derived("):-1]
            label = f"derived({base_draw})" if base_draw else "derived"
        if isinstance(out, torch.Tensor):
            self.produced[id(out)] = (weakref.ref(out), label)
        return out

    def generator_of(self, x) -> str | None:
        return self._label(x)


def _to_meta(x):
    if isinstance(x, torch.Tensor):
        return torch.empty_strided(x.shape, x.stride(), dtype=x.dtype, device="meta")
    return x


def meta_model(lp):
    try:
        model = build_model(lp, "meta")
        if all(t.is_meta for t in model.state_dict().values()):
            return model
    except Exception:
        pass
    model = build_model(lp, "cpu")
    return model.to("meta") if not any(t.is_meta for t in model.state_dict().values()) else model


def tensor_bytes(t) -> int:
    return t.numel() * t.element_size()


CPU_FALLBACK_MAX_BYTES = 1_000_000_000


def analyze_on_meta(lp, with_trace: bool = True,
                    cpu_fallback_max_bytes: int = CPU_FALLBACK_MAX_BYTES, trace_max: int | None = None) -> MetaResult:
    """Run the reference once on meta; a failure is returned in `error`, not raised.

    A forward with data-dependent shapes or `.item()` cannot run on meta; a problem that declares
    the `data_dependent` quirk then runs once on CPU with the seed-42 inputs, if its inputs and
    state are under `cpu_fallback_max_bytes` (the result says `device="cpu"`).
    """
    res = analyze_on(lp, "meta", with_trace, trace_max)
    if (res.error is None or lp.metadata.get("KNOWN_ISSUE") or res.inputs is None
            or "data_dependent" not in (lp.metadata.get("QUIRKS") or [])):
        return res
    bytes_in = sum(_numel_bytes(x) for x in res.inputs) + sum(
        _numel_bytes({"shape": s, "dtype": d}) for _, s, d in res.state_dict or [])
    if bytes_in > cpu_fallback_max_bytes:
        res.error += f" (data-dependent forward; {bytes_in / 1e9:.1f} GB of inputs and state is too large for a CPU run)"
        return res
    cpu = analyze_on(lp, "cpu", with_trace, trace_max)
    return cpu if cpu.error is None else res


def _numel_bytes(spec: dict) -> int:
    n = 1
    for d in spec["shape"]:
        n *= d
    return n * torch.empty(0, dtype=getattr(torch, spec["dtype"], torch.float32)).element_size()


def analyze_on(lp, device: str, with_trace: bool, trace_max: int | None = None) -> MetaResult:
    """The reference's state, inputs, outputs, FLOPs and bytes on `device`; with_trace: its aten ops too (the first
    trace_max of them)."""
    res = MetaResult(device=device)
    recorder = AtenRecorder(trace_max) if with_trace else None
    try:
        if device == "meta":
            model = meta_model(lp)
            generators: list = []
            inputs = meta_inputs(lp, generators)
        else:
            torch.manual_seed(0)
            model = build_model(lp, "cpu")
            generators = meta_inputs_generators(lp)
            torch.manual_seed(42)
            inputs = list(lp.module.get_inputs())
        state = model.state_dict()
        res.state_dict = [[k, list(v.shape), dtype_name(v.dtype)] for k, v in state.items()]
        res.inputs = [dict(_tensor_spec(x), generator=g) for x, g in zip(inputs, generators)]
        flop_counter = FlopCount()
        memo = MetaKernelMemo() if device == "meta" else contextlib.nullcontext()
        with torch.no_grad(), memo, flop_counter:  # entered first: the memo sits right above the kernels
            if recorder:
                with recorder:
                    out = model(*inputs)
            else:
                out = model(*inputs)
        outs = list(out) if isinstance(out, (tuple, list)) else [out]
        res.outputs = [{"shape": list(o.shape), "dtype": dtype_name(o.dtype)} for o in outs if isinstance(o, torch.Tensor)]
        res.flops = int(flop_counter.total)
        parts = {
            "inputs": sum(tensor_bytes(x) for x in inputs if isinstance(x, torch.Tensor)),
            "state_dict": sum(tensor_bytes(v) for v in state.values()),
            "outputs": sum(tensor_bytes(o) for o in outs if isinstance(o, torch.Tensor)),
        }
        res.min_bytes_parts, res.min_bytes = parts, sum(parts.values())
    except Exception as e:
        res.error = f"{type(e).__name__}: {e}"
    res.trace = recorder.lines if recorder else None
    return res


def meta_inputs_generators(lp) -> list:
    gens: list = []
    meta_inputs(lp, gens)
    return gens


def _tensor_spec(x) -> dict:
    if isinstance(x, torch.Tensor):
        return {"name": None, "shape": list(x.shape), "dtype": dtype_name(x.dtype)}
    return {"name": None, "shape": [], "dtype": type(x).__name__}


_SCALARS = (int, float, bool, str, type(None), torch.dtype, torch.device, torch.layout, torch.memory_format)


def _arg_key(a, offsets: bool = True):
    """What a meta kernel can see of an argument (a meta tensor's metadata, a plain value); None: not a key.
    `offsets=False`: without tensors' storage offsets, which a functional op's fresh output does not depend on."""
    if type(a) in (torch.Tensor, torch.nn.Parameter):
        if a.device.type != "meta":
            return None
        return (a.shape, a.stride(), a.dtype, a.storage_offset()) if offsets else (a.shape, a.stride(), a.dtype)
    if isinstance(a, (list, tuple)):
        keys = tuple(_arg_key(x, offsets) for x in a)
        return None if None in keys else (type(a), keys)
    return (type(a), a) if isinstance(a, _SCALARS) else None


class MetaKernelMemo(TorchDispatchMode):
    """Gives a functional op called again with the same argument metadata fresh meta tensors of the output metadata
    it had the first time, and an in-place op that kept its tensor's metadata that tensor again, without running the
    meta kernel again (a Python reference of ~0.5 ms an op: a recurrent network repeats the same few ops at every
    step). Views, and in-place ops that change metadata (resize_, t_), always run: their outputs alias."""

    def __init__(self):
        super().__init__()
        self.seen: dict = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        schema = func._schema
        returns = [r.alias_info for r in schema.returns]
        first = schema.arguments[0].alias_info if schema.arguments else None
        in_place = (len(returns) == 1 and returns[0] is not None and returns[0].is_write and first is not None
                    and first.before_set == returns[0].before_set)  # `op_(Tensor(a!) self, ...) -> Tensor(a!)`
        key = None
        if in_place or (not schema.is_mutable and all(r is None for r in returns)):
            key = _arg_key((args, tuple(sorted(kwargs.items()))), offsets=in_place)
        if key is not None and (func, key) in self.seen:
            kind, specs = self.seen[func, key]
            if kind == "self":
                return args[0]
            fresh = [torch.empty_strided(shape, stride, dtype=dtype, device="meta") for shape, stride, dtype in specs]
            return fresh[0] if kind is None else kind(fresh)
        before = _arg_key(args[0]) if key is not None and in_place else None
        out = func(*args, **kwargs)
        if key is None:
            return out
        if in_place:
            if out is args[0] and _arg_key(out) == before:  # metadata unchanged (not resize_, t_, ...)
                self.seen[func, key] = ("self", None)
            return out
        outs = [out] if type(out) is torch.Tensor else out if isinstance(out, (list, tuple)) else None
        if outs is not None and all(
                type(o) is torch.Tensor and o.device.type == "meta" and o.storage_offset() == 0 for o in outs):
            self.seen[func, key] = (None if outs is not out else type(out),
                                    [(o.shape, o.stride(), o.dtype) for o in outs])
        return out


_SIZE_QUERIES = {getattr(torch.ops.aten, name).default for name in (
    "sym_is_contiguous", "is_contiguous", "is_strides_like_format", "is_non_overlapping_and_dense", "size", "sym_size",
    "stride", "sym_stride", "storage_offset", "sym_storage_offset", "numel", "sym_numel", "dim")} | {
    torch.ops.aten.is_contiguous.memory_format, torch.ops.prim.layout.default}
_COMPOSITE = torch._C.DispatchKey.CompositeImplicitAutograd


class FlopCount(TorchDispatchMode):
    """torch's FlopCounterMode total, counted as it counts (its formulas; an op with a composite decomposition is
    decomposed and its parts counted), without its per-module bookkeeping, which made most of the time of a
    recurrent network's meta run (tens of thousands of ops)."""

    def __init__(self):
        super().__init__()
        self.total = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _SIZE_QUERIES:
            return NotImplemented
        if isinstance(func, torch._ops.HigherOrderOperator):
            raise NotImplementedError(f"no FLOP count for the higher-order op {func}")
        if func is not torch.ops.prim.device.default and (
                _COMPOSITE in func.py_kernels or torch._C._dispatch_has_kernel_for_dispatch_key(func.name(), _COMPOSITE)):
            with self:
                out = func.decompose(*args, **kwargs)
            if out is not NotImplemented:
                return out
        out = func(*args, **kwargs)
        formula = flop_registry.get(func._overloadpacket)
        if formula is not None:
            self.total += formula(*args, **kwargs, out_val=out)
        return out


class AtenRecorder(TorchDispatchMode):
    """Records every aten op as `op(args)->result`, tensors as `f32[2, 3]` (`{nc}`: non-contiguous); the first
    max_lines of them (formatting is most of a long trace's cost: a recurrent network runs 100,000 ops)."""

    DROP_KWARGS = ("device", "layout", "pin_memory", "memory_format", "non_blocking")

    def __init__(self, max_lines: int | None = None):
        super().__init__()
        self.lines: list[str] = []
        self.max_lines = max_lines

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        if self.max_lines is not None and len(self.lines) >= self.max_lines:
            return out
        parts = [fmt_arg(a) for a in args]
        parts += [f"{k}={fmt_arg(v)}" for k, v in kwargs.items() if k not in self.DROP_KWARGS]
        self.lines.append(f"{func}({', '.join(parts)})->{fmt_arg(out)}")
        return out


SHORT_DTYPES = {
    "float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16", "int64": "i64", "int32": "i32",
    "int16": "i16", "int8": "i8", "uint8": "u8", "bool": "b8", "float8_e4m3fn": "f8e4m3fn", "float8_e5m2": "f8e5m2",
    "complex64": "c64", "complex128": "c128",
}


TRACE_LIST_MAX = 16


def fmt_arg(a) -> str:
    if isinstance(a, torch.Tensor):
        s = f"{SHORT_DTYPES.get(dtype_name(a.dtype), dtype_name(a.dtype))}[{', '.join(str(d) for d in a.shape)}]"
        return s if a.is_contiguous() else s + "{nc}"
    if isinstance(a, (list, tuple)):
        items = [fmt_arg(x) for x in a[:TRACE_LIST_MAX]]
        if len(a) > TRACE_LIST_MAX and all(isinstance(x, torch.Tensor) for x in a):
            items.append(f"...(+{len(a) - TRACE_LIST_MAX})")  # the specs' spelling of long tensor lists
        else:
            items += [fmt_arg(x) for x in a[TRACE_LIST_MAX:]]
        return "[" + ", ".join(items) + "]"
    if isinstance(a, torch.dtype):
        return dtype_name(a)
    if isinstance(a, float):
        return repr(a)
    return str(a)


_FLOAT_RE = re.compile(r"(?<![\w.])-?(\d+\.\d*(e[+-]?\d+)?|\d+e[+-]?\d+|inf|nan)(?![\w.])")


def normalize_trace_line(line: str) -> str:
    """One spelling for trace lines from either spec file and from AtenRecorder."""
    s = line.replace(" -> ", "->").replace("{nc}", "")
    op, _, rest = s.partition("(")
    op = op[:-len(".default")] if op.endswith(".default") else op
    rest = rest.replace(" ", "")
    rest = re.sub(r",?memory_format=[\w.]+", "", rest)  # recorded by some tracers, dropped by others
    rest = re.sub(r"dtype=(\w+)", lambda m: "dtype=" + SHORT_DTYPES.get(m.group(1), m.group(1)), rest)
    rest = re.sub(r"(?<=[(,\[])(float32|float64|float16|bfloat16|int64|int32|int8|uint8|bool)(?=[,)\]])",
                  lambda m: SHORT_DTYPES[m.group(1)], rest)

    return op + "(" + rest


def trace_lines_equal(a: str, b: str, rel: float = 1e-4) -> bool:
    """Normalized trace lines equal, floats within `rel` (spec files print 6 significant digits)."""
    a, b = normalize_trace_line(a), normalize_trace_line(b)
    if a == b:
        return True
    fa, fb = _FLOAT_RE.findall(a), _FLOAT_RE.findall(b)
    if _FLOAT_RE.sub("#", a) != _FLOAT_RE.sub("#", b) or len(fa) != len(fb):
        return False
    for x, y in zip(fa, fb):
        x, y = float(x[0]), float(y[0])
        if not (x == y or abs(x - y) <= rel * max(abs(x), abs(y))):
            return False
    return True
