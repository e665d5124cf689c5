"""The trusted reference side: the problem's reference built, its inputs drawn, outputs compared, timed.

Everything here runs in the judge (harness/judge.py) or the baseline sweep, never beside a submission:
the submission's process (harness/candidate.py) imports none of it but the timer.
"""
from __future__ import annotations

import copy
import math
import os
import secrets

import torch
import torch._dynamo  # noqa: F401  imported before any snapshot: it rebinds torch.manual_seed on import

from kb_data.harness import timing
from kb_data.io import private_dir
from kb_data.meta import tensor_bytes
from kb_data.rules import baseline_choice, precision_class, tolerance
from kb_data.schema import EAGER_BASELINE_TYPES

FP64_CHECKED = ("fp32", "fp16", "bf16")  # the precision classes a float64 check applies to

class Stage(Exception):
    """Ends the run early with a status and a message."""

    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def versions() -> dict:
    v = {"torch_version": torch.__version__, "cuda_version": torch.version.cuda, "triton_version": None,
         "driver_version": None}
    try:
        import triton

        v["triton_version"] = triton.__version__
    except Exception:
        pass
    return v


def _driver_version() -> str | None:
    """The NVIDIA kernel driver's version (e.g. 580.159.04), not the CUDA API version."""
    import re
    import subprocess

    try:
        with open("/proc/driver/nvidia/version", encoding="utf-8") as f:
            m = re.search(r"Kernel Module\s+(?:for \S+\s+)?([\d.]+)", f.read())
            if m:
                return m.group(1)
    except OSError:
        pass
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = out.stdout.split()
    return lines[0] if out.returncode == 0 and lines else None


# ---------------------------------------------------------------------------
# Building

def _to_device(x, device):
    if isinstance(x, torch.Tensor):
        return x.to(device)
    return x


def make_inputs(mod, seed: int, device) -> list:
    """get_inputs() under the seed, drawn on the grading device (GB-sized CPU draws cost seconds each)."""
    timing.manual_seed(seed)
    with torch.device(device):
        return [_to_device(x, device) for x in mod.get_inputs()]


def _input_specs(mod) -> list:
    """The inputs' shapes and dtypes without drawing them (meta device), as far as get_inputs allows."""
    try:
        with torch.device("meta"):
            return list(mod.get_inputs())
    except Exception:
        return list(mod.get_inputs())


def clone_inputs(inputs: list) -> list:
    return [x.clone() if isinstance(x, torch.Tensor) else copy.deepcopy(x) for x in inputs]


def _mode(model, rules):
    if rules["model_mode"] == "eval":
        model.eval()
    return model


def build_reference(mod, rules: dict, device, init_seed: int):
    timing.manual_seed(rules["seeds"][0] if rules["weights"] == "same_seed" else init_seed)
    return _mode(mod.Model(*mod.get_init_inputs()).to(device), rules)


def private_compile_caches() -> None:
    """Inductor's and Triton's caches (code this process loads when it compiles) in private folders of this uid, unless
    the operator chose them: their defaults are names in the shared /tmp that a sandbox could create first."""
    for var, name in (("TORCHINDUCTOR_CACHE_DIR", "inductor"), ("TRITON_CACHE_DIR", "triton")):
        if var not in os.environ:  # set once per process: a resident judge's later jobs find it
            os.environ[var] = str(private_dir(name))


def compile_reference(ref, mod, rules: dict, device):
    """The reference under torch.compile as its baseline is measured, called three times on the timing inputs
    (compile, record the CUDA graph, replay), so that what follows times a warm model."""
    compiled = torch.compile(ref, mode=rules["compile_mode"])
    inputs = make_inputs(mod, rules["timing_seed"], device)
    with torch.no_grad():
        for _ in range(3):
            compiled(*inputs)
    timing.synchronize(device)
    return compiled


def _first_lines(e: BaseException, n: int = 12) -> str:
    lines = str(e).strip().splitlines()
    return "\n".join(lines[:n] + (["..."] if len(lines) > n else []))


# ---------------------------------------------------------------------------
# Comparing

def _outputs(out) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def compare(ref_out, cand_out, rules: dict, atol: float, rtol: float,
            relative: bool = True) -> tuple[bool, str | None, float, float]:
    """(passed, why not, max_abs_err, max_rel_err) under the suite's check; max_rel_err is NaN unless `relative` (no
    verdict needs it: it is evidence for the record, and a timed call's comparison is cheaper without it)."""
    refs, cands = _outputs(ref_out), _outputs(cand_out)
    if len(refs) != len(cands):
        return False, f"returned {len(cands)} outputs, expected {len(refs)}", math.inf, math.inf
    worst_abs, worst_rel = 0.0, 0.0
    for k, (r, c) in enumerate(zip(refs, cands)):
        where = f"output {k}: " if len(refs) > 1 else ""
        if not isinstance(c, torch.Tensor):
            return False, f"{where}expected a tensor, got {type(c).__name__}", math.inf, math.inf
        if not isinstance(r, torch.Tensor):
            continue
        if tuple(c.shape) != tuple(r.shape):
            return False, f"{where}shape {tuple(c.shape)}, expected {tuple(r.shape)}", math.inf, math.inf
        if c.device != r.device:
            return False, f"{where}on {c.device}, expected {r.device}", math.inf, math.inf
        if r.numel() == 0:
            continue
        ref_finite, cand_finite, max_abs, max_rel, ref_max, all_close = _figures(r, c, rules, atol, rtol, relative)
        if rules["require_finite"] and not ref_finite:
            return False, f"{where}the reference output has NaN/Inf: the problem cannot be graded", math.nan, math.nan
        if rules["require_finite"] and not cand_finite:
            return False, f"{where}output has NaN/Inf", math.inf, math.inf
        max_rel = max_rel if max_abs > 0 else 0.0
        worst_abs, worst_rel = max(worst_abs, max_abs), max(worst_rel, max_rel) if relative else math.nan
        if rules["check"] == "allclose":
            if not all_close:
                return False, f"{where}not allclose (atol={atol}, rtol={rtol}): max abs err {max_abs:.3g}", worst_abs, worst_rel
        else:
            bound = atol + rtol * ref_max
            if not max_abs < bound:
                return False, f"{where}max|ref-sol| = {max_abs:.4g} >= atol + rtol*max|ref| = {bound:.4g}", worst_abs, worst_rel
    return True, None, worst_abs, worst_rel


COMPARE_CHUNK = 1 << 26  # elements compared at a time: the temporaries of a comparison stay under ~2 GB


def _figures(r: torch.Tensor, c: torch.Tensor, rules: dict, atol: float, rtol: float,
             relative: bool = True) -> list[float]:
    """(reference all finite, candidate all finite, max abs err, max rel err, largest finite |ref|, all close) of one
    output, on the device, a chunk at a time: v0.1 FrobeniusNorm's 7.5 GB output compared whole made five temporaries
    of its size and ran the judge out of GPU memory. This runs on every timed call, so a chunk whose values are all
    finite (the two maxima below say so: NaN and inf carry through them) takes the short way, in place on two
    temporaries; only a chunk with a NaN or an inf pays for the masks (`_masked_figures`), with the same figures."""
    rflat, cflat = r.detach().reshape(-1), c.detach().reshape(-1)
    allclose = rules["check"] == "allclose"
    per_chunk = []
    for lo in range(0, rflat.numel(), COMPARE_CHUNK):
        rf, cf = rflat[lo:lo + COMPARE_CHUNK].float(), cflat[lo:lo + COMPARE_CHUNK].float()
        diff = torch.sub(rf, cf).abs_()
        ref_abs = rf.abs()
        ref_max, diff_max = torch.stack([ref_abs.max(), diff.max()]).tolist()
        if not (math.isfinite(ref_max) and math.isfinite(diff_max)):
            per_chunk.append(_masked_figures(rf, cf, rules, atol, rtol))
            continue
        # isclose's |c - r| <= atol + |rtol * r|, which is what it computes for finite values
        close = (diff <= ref_abs.mul(rtol).add_(atol)).all() if allclose else torch.ones((), device=rf.device)
        rel = diff.div_(ref_abs.clamp_min_(1e-8)).max() if relative else torch.full((), math.nan, device=rf.device)
        rel, close = torch.stack([rel, close.to(rel)]).tolist()
        per_chunk.append([1.0, 1.0, diff_max, rel, ref_max, close])
        del diff, ref_abs
    lowest = [min(f[i] for f in per_chunk) for i in range(6)]
    highest = [max(f[i] for f in per_chunk) for i in range(6)]
    return [lowest[0], lowest[1], highest[2], highest[3], highest[4], lowest[5]]


def _masked_figures(rf: torch.Tensor, cf: torch.Tensor, rules: dict, atol: float, rtol: float) -> list[float]:
    """_figures of a float32 chunk with NaN or inf in it. Not rf[isfinite(rf)]: boolean indexing builds an int64
    index per element and dimension. Where the reference is finite, so is the candidate exactly where the difference
    is; where it is not, the candidate's finiteness decides nothing (compare stops at the reference)."""
    diff = (rf - cf).abs_()
    ref_abs = rf.abs()
    ref_finite = torch.isfinite(ref_abs.max())
    cand_finite = torch.isfinite(diff.max()) | ~ref_finite
    if not rules["require_finite"]:
        both_nan = torch.isnan(rf) & torch.isnan(cf)
        same_inf = torch.isinf(rf) & (rf == cf)
        diff = torch.where(both_nan | same_inf, torch.zeros_like(diff), diff)
        diff = torch.nan_to_num(diff, nan=math.inf)
    close = torch.isclose(cf, rf, atol=atol, rtol=rtol, equal_nan=True).all() if rules["check"] == "allclose" \
        else torch.ones((), dtype=torch.bool, device=rf.device)
    rel = (diff / ref_abs.clamp_min(1e-8)).max()
    ref_abs.nan_to_num_(nan=0.0, posinf=0.0)  # after `rel`: the largest finite magnitude of the reference
    return torch.stack([ref_finite.float(), cand_finite.float(), diff.max(), rel, ref_abs.max(), close.float()]).tolist()


def _sample(t: torch.Tensor, n: int = 65536) -> torch.Tensor:
    flat = t.detach().reshape(-1)
    if flat.numel() > n:
        flat = flat[:: max(1, flat.numel() // n)][:n]
    return flat.to(device="cpu", dtype=torch.float32, copy=True)  # a copy: the output is poisoned later


# ---------------------------------------------------------------------------
# The pipeline

def use_gpu(device: torch.device, result: dict) -> None:
    """Make `device` current with true fp32 matmuls and convolutions (the references are fp32, TF32 is not), and
    note its name and driver in `result` (a worker's result, which has "versions")."""
    torch.cuda.set_device(device)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    result["gpu_name"] = torch.cuda.get_device_name(device)
    result["versions"]["driver_version"] = _driver_version()


def paired_reference(mod, ref, rules, device, job, res):
    """The model to time beside the candidate, or None (timed against a stored median): the eager reference for an
    eager baseline; for a torch.compile baseline on a GPU, the reference compiled as the sweep compiles it, and
    warmed up here, before the submission loads. Sets res["ref_alone_ms"] (its median before the submission
    exists) and res["ref_paired_type"]."""
    if not job.get("pair_reference", False):
        return None
    measured = res.get("baseline")
    kind = measured.get("baseline_type") if measured else job.get("baseline_type")
    if kind == "torch_compile":
        if device.type != "cuda":
            return None
        try:
            model = compile_reference(ref, mod, rules, device)
        except Exception as e:  # no verdict on the submission: its speedup falls back on the stored median
            res["flag_details"]["paired_reference"] = (f"the compiled reference failed here ({type(e).__name__}: "
                                                       f"{_first_lines(e, 2)}); timed against the stored median")
            return None
        paired_type, alone = "torch_compile", _alone_ms(measured, "compile")
    elif kind in EAGER_BASELINE_TYPES or kind is None:
        if measured and measured.get("eager_ms") is None:
            return None
        model, paired_type, alone = ref, "pytorch_eager", _alone_ms(measured, "eager")
    else:
        return None
    if alone is None:
        alone = time_model(model, RotatingInputs(mod, rules, device, job), rules, device, job).median_ms
    res["ref_alone_ms"], res["ref_paired_type"] = alone, paired_type
    return model


def _alone_ms(measured: dict | None, kind: str) -> float | None:
    """A baseline's median for the paired reference's slowdown backstop: the lower of the graded one and the GPU's
    work alone (the paired batches are timed by their GPU work, Timer.timed_batch's head start)."""
    figures = [(measured or {}).get(f"{kind}_{m}") for m in ("ms", "gpu_ms")]
    return min((f for f in figures if f), default=None)


class _Stages:
    """Wall seconds per pipeline stage, for the overhead benchmark."""

    def __init__(self, out: dict):
        self.out, self.t = out, timing._perf_counter()

    def __call__(self, name: str) -> None:
        now = timing._perf_counter()
        self.out[name] = now - self.t
        self.t = now


def out_of_memory(e: BaseException) -> bool:
    """A failure to allocate, on the device (OutOfMemoryError) or the host (the CPU allocator's RuntimeError)."""
    return isinstance(e, torch.OutOfMemoryError) or (
        isinstance(e, RuntimeError) and ("out of memory" in str(e).lower() or "can't allocate memory" in str(e)))


def _call(model, inputs, seed: int, what: str):
    timing.manual_seed(seed)  # same RNG stream for candidate and reference (dropout, randn in forward)
    try:
        with torch.no_grad():
            return model(*inputs)
    except Exception as e:
        if out_of_memory(e):  # memory, not the reference: the callers decide (a float64 check that cannot run fails)
            raise
        raise Stage("runtime_error", f"{what} forward raised {type(e).__name__}: {_first_lines(e)}")


TIMING_SETS_MAX_BYTES = 8 << 30


def _input_sets(mod, rules, device, job) -> list:
    """Distinct input sets for the timed calls (3, or 2 when one set is large)."""
    base = rules["timing_seed"]
    first = make_inputs(mod, base, device)
    size = sum(tensor_bytes(x) for x in first if isinstance(x, torch.Tensor))
    k = job.get("timing_sets", 3 if 3 * size <= TIMING_SETS_MAX_BYTES else 2)
    return [first] + [make_inputs(mod, base + j, device) for j in range(1, k)]


class RotatingInputs:
    """The timed calls' inputs: call i copies input set i % K into the same buffers and reseeds,
    so every call sees other values than the one before (nothing can be replayed) at the same addresses."""

    def __init__(self, mod, rules, device, job):
        self.sets = _input_sets(mod, rules, device, job)
        self.seeds = [rules["timing_seed"] + j for j in range(len(self.sets))]
        self.work = clone_inputs(self.sets[0])

    def prepare(self, i: int) -> None:
        k = i % len(self.sets)
        for w, s in zip(self.work, self.sets[k]):
            if isinstance(w, torch.Tensor):
                w.copy_(s)
        timing.manual_seed(self.seeds[k])


def _forward_on(model, work: list):
    """A timed call: the model on the (rotating) work buffers, without autograd."""
    def call(i):
        with torch.no_grad():
            return model(*work)
    return call


def time_model(model, rot: RotatingInputs, rules, device, job) -> timing.Timing:
    """The rule's warm-up and trials of one trusted model (the reference, eager or compiled)."""
    return timing.Timer(device, l2_flush=rules["l2_flush"]).run(
        _forward_on(model, rot.work), warmup=job.get("warmup", rules["warmup"]), trials=job.get("trials", rules["trials"]),
        prepare=rot.prepare, min_timed_ms=job.get("min_timed_ms", timing.MIN_TIMED_MS))


def time_model_gpu_alone(model, rot: RotatingInputs, rules, device) -> timing.GpuAlone:
    """The rule's trials of one trusted model with the host's work out of the interval (Timer.run_gpu_alone)."""
    return timing.Timer(device, l2_flush=rules["l2_flush"]).run_gpu_alone(
        _forward_on(model, rot.work), trials=rules["trials"], prepare=rot.prepare)


def measure_baseline(mod, ref, rules, device, job) -> dict:
    """Time the reference eagerly and, where the rules use it, under torch.compile: each as graded (the host's
    work inside the interval) and, on a GPU, with the GPU's work alone (`*_gpu_ms`, the figure that repeats
    from one process to the next)."""
    rot = RotatingInputs(mod, rules, device, job)
    out = {"eager_ms": None, "compile_ms": None, "compile_error": None}
    gpu_alone_errors = []

    def gpu_alone(kind, model):
        if torch.device(device).type != "cuda":
            return
        try:
            g = time_model_gpu_alone(model, rot, rules, device)
        except Exception as e:  # the graded median stands without it
            gpu_alone_errors.append(f"{kind}: {type(e).__name__}: {_first_lines(e, 2)}")
            return
        out[f"{kind}_gpu_ms"] = g.median_ms
        if g.error:
            gpu_alone_errors.append(f"{kind}: {g.error}")

    try:
        t = time_model(ref, rot, rules, device, job)
        out.update(eager_ms=t.median_ms, eager_p10_ms=t.p10_ms, eager_p90_ms=t.p90_ms, n_trials=len(t.times_ms))
        gpu_alone("eager", ref)
    except Exception as e:
        out["error"] = f"the reference failed: {type(e).__name__}: {_first_lines(e, 4)}"
        return out
    if job.get("compile_baseline", rules["baseline"] == "compile_if_faster"):
        try:
            compiled = torch.compile(ref, mode=rules["compile_mode"])
            t = time_model(compiled, rot, rules, device, job)
            out.update(compile_ms=t.median_ms, compile_p10_ms=t.p10_ms, compile_p90_ms=t.p90_ms)
            gpu_alone("compile", compiled)
        except Exception as e:
            out["compile_error"] = f"{type(e).__name__}: {_first_lines(e, 4)}"
    out["gpu_alone_error"] = "; ".join(gpu_alone_errors) or None
    kind, ms = baseline_choice(rules, out["eager_ms"], out["compile_ms"])
    out.update(baseline_type=kind, baseline_ms=ms)
    pre = "compile" if kind == "torch_compile" else "eager"
    out.update(p10_ms=out.get(f"{pre}_p10_ms"), p90_ms=out.get(f"{pre}_p90_ms"))
    return out


# ---------------------------------------------------------------------------
# Dynamic anti-cheat checks (run once the candidate is known to be correct)

FP64_CHECK_MAX_BYTES = 4 << 30  # inputs and outputs whose float64 copies (twice this) must fit beside everything else


FP64_ROWS_BYTES = 1 << 30  # a batch too large for it is compared on rows of it: this many bytes of input and output
ROWS_APART_TOL = (1e-5, 1e-4)  # (atol, rtol): the reference on those rows alone gives its rows of the whole batch


def batch_rows(inputs: list, outs: list, ref_out) -> tuple[list, list, list] | str:
    """Rows of a batch too large for the float64 comparison, drawn in secret: every tensor input and output that
    leads with the batch's size, cut to as many rows as FP64_ROWS_BYTES of input and output holds (copies), with
    the reference's rows; a string says why the batch cannot be cut."""
    first = next((x for x in inputs if isinstance(x, torch.Tensor)), None)
    lead = first.shape[0] if first is not None and first.dim() else 0
    cut = lambda x: isinstance(x, torch.Tensor) and x.dim() > 0 and x.shape[0] == lead
    refs = _outputs(ref_out)
    if lead < 2 or not all(cut(o) for o in refs if isinstance(o, torch.Tensor)):
        return "its inputs and outputs share no batch dimension to cut"
    tensors = [x for x in list(inputs) + list(refs) if isinstance(x, torch.Tensor)]
    row = sum(tensor_bytes(x) for x in tensors if cut(x)) / lead
    k = min(lead - 1, int((FP64_ROWS_BYTES - sum(tensor_bytes(x) for x in tensors if not cut(x))) // row))
    if k < 1:
        return "one row of its batch is already too large"
    pick = torch.tensor(sorted(secrets.SystemRandom().sample(range(lead), k)))  # secret rows: not the first ones
    rows = lambda xs: [x.index_select(0, pick.to(x.device)) if cut(x) else x for x in xs]
    return rows(inputs), rows(outs), rows(refs)


def rows_apart(ref, rows_in: list, ref_rows: list, rng: int, rules: dict) -> str | None:
    """None when the reference on those rows alone gives its rows of the whole batch (each row is computed apart
    from the others: the rows' float64 comparison stands for the batch's); else why not."""
    alone = _call(ref, clone_inputs(rows_in), rng, "the reference")
    ok, why, _, _ = compare(ref_rows if len(ref_rows) > 1 else ref_rows[0], alone, rules, *ROWS_APART_TOL)
    return None if ok else f"the reference's rows depend on each other ({why})"


def _fp64_feasible(inputs, outs, precision: str) -> bool:
    """Whether a float64 run of the reference on these inputs is meaningful (a floating precision class) and fits:
    its copies of the inputs and of the outputs (a convolution's output can be eight times its input)."""
    return (precision in FP64_CHECKED and sum(tensor_bytes(x) for x in list(inputs) + _outputs(outs)
                                              if isinstance(x, torch.Tensor)) <= FP64_CHECK_MAX_BYTES)


def suite_tolerance(inputs, rules: dict) -> tuple[str, float, float]:
    """The precision class of a problem's first tensor input, and the suite's (atol, rtol) for it."""
    first = next((x for x in inputs if isinstance(x, torch.Tensor)), None)
    precision = precision_class(str(first.dtype) if first is not None else None, rules)
    return (precision, *tolerance(rules, precision))


def problem_degenerate_reason(ref, rules: dict, input_sets: list) -> str | None:
    """Whether the reference's outputs on these input sets (seeds timing_seed + j) make the problem degenerate,
    judged with the suite's tolerance: what a trivial kernel could pass on."""
    samples = []
    for j, inputs in enumerate(input_sets):
        out = _call(ref, inputs, rules["timing_seed"] + j, "the reference")
        samples.append((j, [], [_sample(o) for o in _outputs(out) if isinstance(o, torch.Tensor)],
                        [_sample(x) for x in inputs if isinstance(x, torch.Tensor)]))
    _, atol, rtol = suite_tolerance(input_sets[0], rules)
    return degenerate_reason(samples, atol, rtol)


def degenerate_reason(samples, atol, rtol) -> str | None:
    """Why a reference is degenerate, from (seed, cand, ref, inputs) samples; None if it is not."""
    if not samples:
        return None
    refs = [s[2] for s in samples]
    for k in range(len(refs[0])):
        outs = [r[k] for r in refs if k < len(r)]
        if outs[0].numel() > 1 and all(_rel_change(outs[0], o) <= 1e-3 for o in outs[1:]) and len(outs) > 1:
            return "the reference output barely changes across seeds"
        spread = float(outs[0].std()) if outs[0].numel() > 1 else 1.0
        if spread <= 1e-6 * max(float(outs[0].abs().max()), 1e-12):
            return "the reference output is constant"
        # every value within tolerance of one constant (v0.1's FrobeniusNorm: all outputs below its atol)
        if outs[0].numel() > 1 and all(bool(((o - o.mean()).abs() <= atol + rtol * o.abs()).all()) for o in outs):
            return "the reference output is within tolerance of a constant"
    for _, _, r, ins in samples[:1]:
        for out in r:
            for x in ins:
                if x.shape == out.shape and float((x - out).abs().max()) <= atol + rtol * float(out.abs().max()):
                    return "the reference output equals one of its inputs within tolerance"
    return None



def _rel_change(a: torch.Tensor, b: torch.Tensor) -> float:
    if a.numel() == 0:
        return 0.0
    return float((a - b).abs().max()) / max(float(a.abs().max()), float(b.abs().max()), 1e-12)
