"""The dangerous part: runs a submission inside an isolated worker process.

Everything in this module executes untrusted code (the submission) and must only ever be
called in a child process started by `kb_data.harness.worker`. It builds the reference and
the candidate, checks correctness over the rule's seeds plus a secret one, times the
candidate with re-checked outputs, and gathers the evidence behind every anomaly flag. It
returns a plain dict; the parent turns it into a RunRecord.
"""
from __future__ import annotations

import copy
import hashlib
import math
import re
import statistics
import threading
import traceback
import types

import torch
import torch._dynamo  # noqa: F401  imported before any snapshot: it rebinds torch.manual_seed on import

from kb_data.harness import timing
from kb_data.problems import exec_problem_code, ProblemError, tensor_bytes
from kb_data.rules import baseline_choice, precision_class, tolerance
from kb_data.schema import EAGER_BASELINE_TYPES

# Aten ops heavy enough that calling them from a candidate means the framework did the work.
HEAVY_OPS = {
    "aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear", "aten::addmv",
    "aten::mv", "aten::dot", "aten::einsum", "aten::convolution", "aten::_convolution", "aten::conv1d",
    "aten::conv2d", "aten::conv3d", "aten::conv_transpose1d", "aten::conv_transpose2d", "aten::conv_transpose3d",
    "aten::cudnn_convolution", "aten::mkldnn_convolution", "aten::scaled_dot_product_attention",
    "aten::_scaled_dot_product_flash_attention", "aten::_scaled_dot_product_efficient_attention",
    "aten::_scaled_dot_product_cudnn_attention", "aten::_flash_attention_forward", "aten::native_layer_norm",
    "aten::layer_norm", "aten::native_group_norm", "aten::group_norm", "aten::native_batch_norm", "aten::batch_norm",
    "aten::_native_batch_norm_legit", "aten::_native_batch_norm_legit_no_training", "aten::cudnn_batch_norm",
    "aten::_softmax", "aten::softmax", "aten::_log_softmax", "aten::log_softmax", "aten::_scaled_mm",
    "aten::max_pool2d_with_indices", "aten::max_pool3d_with_indices", "aten::avg_pool2d", "aten::avg_pool3d",
    "aten::cross_entropy_loss", "aten::nll_loss_forward", "aten::rms_norm", "aten::_fused_rms_norm",
    "aten::instance_norm", "aten::_fft_c2c", "aten::_fft_r2c", "aten::cumsum", "aten::sort", "aten::topk",
    "aten::upsample_bicubic2d", "aten::upsample_bilinear2d", "aten::_embedding_bag", "aten::gelu", "aten::silu",
}
# Kernels that come from the framework or its libraries (cuBLAS, cuDNN, CUTLASS, torch.compile's Triton).
FRAMEWORK_KERNEL_RE = re.compile(
    r"at::|at_cuda_detail|\bcub::|cublas|cutlass|cudnn|xmma|nvjet|sgemm|hgemm|gemv2|gemmSN|gemmk1|splitKreduce|"
    r"implicit_convolve|precomputed_convolve|explicit_convolve|im2col|col2im|\bfft|flash_fwd|fmha|pytorch_flash|"
    r"triton_(poi|per|red|tem|for)_|^Memcpy|^Memset|cask_|elementwise_kernel|reduce_kernel|CatArrayBatchedCopy|"
    r"cutensor|cusparse|curand|indexSelect|gatherTopK|radixSort|bitonicSort|^void \(anonymous namespace\)::",
    re.I)
REDUCED_PRECISION_KERNEL_RE = re.compile(r"bf16|f16|fp16|half|h884|h1688|h16816|hmma|tf32|s16816|i8816|e4m3|e5m2", re.I)
PRECISION_FLOOR = {"fp32": 5e-5, "fp16": 5e-3, "bf16": 2e-2}
PRECISION_FACTOR = 20.0
CONSTANT_REL = 1e-6
# How much slower the paired reference may run than the same reference timed alone before the submission
# loaded. A backstop only: patching is caught exactly by the identity check of the torch surface, dispatcher
# overrides by the dispatcher-table check; this is for what neither sees (background work, starved memory).
# On the H200 a 0.03-0.1 ms problem's absolute times swing 2.5x within seconds (BENCHMARKS.md, Stability):
# an honest Triton GELU once had a paired p10 of 0.102 ms against 0.042 ms alone, so the slowdown must be
# 3x and add 0.1 ms. CPU timing on a shared machine swings further: two pool workers on a 2-core CI machine
# once put every paired call of a 0.2 ms reference over 4x its alone median (a time slice is a few ms).
REFERENCE_SLOWDOWN_LIMIT = {"cuda": 3.0, "cpu": 4.0}
REFERENCE_SLOWDOWN_MIN_MS = {"cuda": 0.1, "cpu": 10.0}
# The dispatch keys whose kernels do the work of a forward (not Meta, Python or tracing keys, which
# torch.compile and custom ops register as they load).
DISPATCH_KEYS = ("CPU", "CUDA", "CompositeImplicitAutograd", "CompositeExplicitAutograd",
                 "CompositeExplicitAutogradNonFunctional", "Autograd", "AutogradCPU", "AutogradCUDA", "AutogradOther")
_TORCH_FUNCTION = torch.Tensor.__torch_function__.__func__  # captured before any submission loads
_manual_seed = torch.manual_seed  # a submission that wraps it must not learn the (secret) seeds


class Stage(Exception):
    """Ends the run early with a status and a message."""

    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def execute(job: dict) -> dict:
    """Grade one submission; never raises (every failure becomes a status)."""
    res = {"status": None, "error": None, "compiled": False, "correct": False, "flags": [], "flag_details": {},
           "seeds": None, "versions": versions(), "stage_s": {}}
    try:
        _execute(job, res)
    except Stage as s:
        res["status"], res["error"] = s.status, s.message
    except torch.cuda.OutOfMemoryError as e:
        res["status"], res["error"] = "runtime_error", f"CUDA out of memory: {str(e).splitlines()[0]}"
    except Exception as e:  # a harness-side failure caused by the submission's state
        res["status"], res["error"] = "runtime_error", f"{type(e).__name__}: {e}\n{_short_tb()}"
    if res["status"] is None:
        res["status"] = "ok"
    res["flags"] = sorted(set(res["flags"]))
    return res


def _flag(res: dict, name: str, detail) -> None:
    res["flags"].append(name)
    res["flag_details"].setdefault(name, detail)


def _short_tb(limit: int = 6) -> str:
    return "".join(traceback.format_exc(limit=-limit).splitlines(True)[-2 * limit:])


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
    _manual_seed(seed)
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
    _manual_seed(rules["seeds"][0] if rules["weights"] == "same_seed" else init_seed)
    return _mode(mod.Model(*mod.get_init_inputs()).to(device), rules)


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


def load_submission(code: str, name: str):
    """Import the submission from a real file: Triton's @jit and tracebacks read the source back."""
    import sys
    import tempfile
    from pathlib import Path

    sha = hashlib.sha256(code.encode()).hexdigest()
    mod = types.ModuleType(f"kb_submission_{sha[:16]}")
    path = Path(tempfile.mkdtemp(prefix="kb-sub-")) / f"{mod.__name__}.py"
    path.write_text(code, encoding="utf-8")
    mod.__file__ = str(path)
    sys.modules[mod.__name__] = mod
    try:
        exec(compile(code, str(path), "exec"), mod.__dict__)
    except SyntaxError as e:
        raise Stage("compile_error", f"{name}: syntax error at line {e.lineno}: {e.msg}")
    except BaseException as e:  # includes load_inline build failures and SystemExit
        raise Stage("compile_error", f"{name}: importing the submission raised {type(e).__name__}: {_first_lines(e)}")
    return mod


def _first_lines(e: BaseException, n: int = 12) -> str:
    lines = str(e).strip().splitlines()
    return "\n".join(lines[:n] + (["..."] if len(lines) > n else []))


def candidate_class(sub, rules: dict):
    names = [rules["candidate_class"]] + [n for n in ("ModelNew", "Model") if n != rules["candidate_class"]]
    for n in names:
        cls = getattr(sub, n, None)
        if isinstance(cls, type) and issubclass(cls, torch.nn.Module):
            return cls
    raise Stage("compile_error", f"the submission defines no nn.Module class {rules['candidate_class']} (looked for {', '.join(names)})")


def build_candidate(cls, mod, rules: dict, device, ref):
    try:
        if rules["weights"] == "same_seed":
            _manual_seed(rules["seeds"][0])
        cand = cls(*mod.get_init_inputs())
        cand = cand.to(device)
        if rules["weights"] == "load_state_dict":
            cand.load_state_dict(ref.state_dict(), strict=False)
    except Stage:
        raise
    except BaseException as e:
        raise Stage("compile_error", f"constructing the candidate raised {type(e).__name__}: {_first_lines(e)}")
    return _mode(cand, rules)


# ---------------------------------------------------------------------------
# Comparing

def _outputs(out) -> list:
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _copy_outputs(out):
    """The outputs with every tensor cloned (the container and anything else as they are)."""
    copy_one = lambda o: o.detach().clone() if isinstance(o, torch.Tensor) else o
    return type(out)(copy_one(o) for o in out) if isinstance(out, (tuple, list)) else copy_one(out)


def check_output_type(out) -> str | None:
    """A plain tensor (or tuple of them) is required; subclasses can defer or fake the work."""
    for o in _outputs(out):
        if type(o) is not torch.Tensor and isinstance(o, torch.Tensor):
            return f"output is a tensor subclass {type(o).__module__}.{type(o).__qualname__}"
        if isinstance(o, torch.Tensor) and getattr(torch.Tensor.__torch_function__, "__func__", None) is not _TORCH_FUNCTION:
            return "torch.Tensor.__torch_function__ was replaced"
    return None


def compare(ref_out, cand_out, rules: dict, atol: float, rtol: float) -> tuple[bool, str | None, float, float]:
    """(passed, why not, max_abs_err, max_rel_err) under the suite's check."""
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
        rf, cf = r.detach().float(), c.detach().float()
        ref_finite = bool(torch.isfinite(rf).all())
        cand_finite = bool(torch.isfinite(cf).all())
        if rules["require_finite"] and not ref_finite:
            return False, f"{where}the reference output has NaN/Inf: the problem cannot be graded", math.nan, math.nan
        if rules["require_finite"] and not cand_finite:
            return False, f"{where}output has NaN/Inf", math.inf, math.inf
        if rf.numel() == 0:
            continue
        diff = (rf - cf).abs()
        if not rules["require_finite"]:
            both_nan = torch.isnan(rf) & torch.isnan(cf)
            same_inf = torch.isinf(rf) & (rf == cf)
            diff = torch.where(both_nan | same_inf, torch.zeros_like(diff), diff)
            diff = torch.nan_to_num(diff, nan=math.inf)
        max_abs = float(diff.max())
        # not rf[isfinite(rf)]: boolean indexing builds an int64 index per element and dimension (56 GiB for a
        # 7.5 GB 4-D output), so the harness itself ran out of memory on v0.1's FrobeniusNorm
        ref_max = float(rf.abs().max()) if ref_finite else float(torch.nan_to_num(rf.abs(), nan=0.0, posinf=0.0).max())
        max_rel = float((diff / rf.abs().clamp_min(1e-8)).max()) if max_abs > 0 else 0.0
        worst_abs, worst_rel = max(worst_abs, max_abs), max(worst_rel, max_rel)
        if rules["check"] == "allclose":
            ok = bool(torch.allclose(cf, rf, atol=atol, rtol=rtol, equal_nan=True))
            if not ok:
                return False, f"{where}not allclose (atol={atol}, rtol={rtol}): max abs err {max_abs:.3g}", worst_abs, worst_rel
        else:
            bound = atol + rtol * ref_max
            if not max_abs < bound:
                return False, f"{where}max|ref-sol| = {max_abs:.4g} >= atol + rtol*max|ref| = {bound:.4g}", worst_abs, worst_rel
    return True, None, worst_abs, worst_rel


def _storages(xs) -> list[tuple[int, int]]:
    spans = []
    for x in xs:
        if isinstance(x, torch.Tensor) and x.numel() > 0:
            st = x.untyped_storage()
            spans.append((st.data_ptr(), st.data_ptr() + st.nbytes()))
    return spans


def _overlaps(a: tuple[int, int], spans: list) -> bool:
    return any(a[0] < hi and lo < a[1] for lo, hi in spans)


def _kept_spans(ref, inputs) -> list[tuple[int, int]]:
    """Storages that must survive the reference's outputs being poisoned: inputs, and every tensor the
    reference module holds (parameters, buffers, plain tensor attributes)."""
    held = list(inputs) + list(ref.state_dict(keep_vars=True).values())
    for m in ref.modules():
        held += [v for v in vars(m).values() if isinstance(v, torch.Tensor)]
    return _storages(held)


def _poison(out, keep: list[tuple[int, int]]) -> None:
    """Fill a reference output's memory with 0xFF bytes (NaN in every float format, -1 in ints) before it is
    freed: a later output allocated over it that the candidate never writes holds garbage, not an answer."""
    for o in _outputs(out):
        if not isinstance(o, torch.Tensor) or not o.numel():
            continue
        st = o.untyped_storage()
        if _overlaps((st.data_ptr(), st.data_ptr() + st.nbytes()), keep):
            continue
        raw = torch.empty(0, dtype=torch.uint8, device=o.device)
        raw.set_(st, 0, (st.nbytes(),))
        raw.fill_(255)


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


def _execute(job: dict, res: dict) -> None:
    rules, device = job["rules"], torch.device(job["device"])
    stage = _Stages(res["stage_s"])
    if device.type == "cuda":
        use_gpu(device, res)
    surface = timing.snapshot_surface(_harness_surface())

    try:
        mod = exec_problem_code(job["problem_code"], job["problem_id"])
    except ProblemError as e:
        raise Stage("runtime_error", f"the problem failed to load: {e}")
    precision, atol, rtol = suite_tolerance(_input_specs(mod), rules)
    res.update(precision_used=precision, atol=atol, rtol=rtol)
    init_seed = job.get("init_seed", 0)
    try:
        ref = build_reference(mod, rules, device, init_seed)
    except Exception as e:
        raise Stage("runtime_error", f"the reference failed to build: {type(e).__name__}: {_first_lines(e)}")

    stage("setup")
    if job.get("measure_baseline"):
        res["baseline"] = measure_baseline(mod, ref, rules, device, job)
        stage("baseline")
    if job.get("baseline_only"):
        return
    # The baseline is timed again beside the candidate (paired trials): a median from another process or another
    # hour differs by clocks, L2 state and the host's pace, which on the H200's VMs moves a short reference's
    # median by up to 40%, a compiled one's most (BENCHMARKS.md, Host share). It is first timed alone, before
    # the submission exists in this process, so a submission that slows what the reference calls is seen.
    paired_ref = _paired_reference(mod, ref, rules, device, job, res)
    if paired_ref is not None:
        stage("reference_alone")

    # what the reference computes before the submission exists in this process: a submission that overrides
    # an op (even in the dispatcher, where no attribute changes) to make the reference agree with it is seen
    seeds = list(rules["seeds"]) + ([job["secret_seed"]] if rules["secret_seed"] and job.get("secret_seed") else [])
    trusted = [_sample(o) for o in _outputs(_call(ref, make_inputs(mod, seeds[0], device), seeds[0], "the reference"))
               if isinstance(o, torch.Tensor)]
    torch_surface, settings, kernels = timing.snapshot_surface(_reference_surface()), _global_settings(), _dispatcher_kernels()
    sub = load_submission(job["submission_code"], job.get("submission_name", "submission.py"))
    cls = candidate_class(sub, rules)
    cand = build_candidate(cls, mod, rules, device, ref)
    res["compiled"] = True
    stage("import_and_build_submission")
    tampered = timing.timer_surface_changes(surface)
    if tampered:
        _flag(res, "timer_tampered", f"replaced while importing/constructing: {', '.join(tampered)}")
    _check_reference_surface(torch_surface, settings, kernels, res, "while importing/constructing")

    res["seeds"] = seeds
    ctx = {"ref_ptrs": set(), "samples": []}
    ok = check_correctness(mod, ref, cand, rules, device, seeds, atol, rtol, res, ctx)
    if ctx["samples"] and not compare(trusted, ctx["samples"][0][2], rules, atol, rtol)[0]:
        _flag(res, "reference_tampered", f"seed {seeds[0]}: the reference's output changed once the submission loaded")
    stage("correctness")
    if not ok:
        return
    res["correct"] = True

    timed, timed_ref = time_candidate(mod, ref, cand, rules, device, atol, rtol, res, job, paired=paired_ref)
    res.update(sol_ms=timed.median_ms, sol_p10_ms=timed.p10_ms, sol_p90_ms=timed.p90_ms, n_trials=len(timed.times_ms))
    if timed_ref is not None:
        res["ref_paired_ms"] = timed_ref.median_ms
        res["paired_speedup"] = timing.paired_ratio(timed, timed_ref)
        limit, margin = REFERENCE_SLOWDOWN_LIMIT[device.type], REFERENCE_SLOWDOWN_MIN_MS[device.type]
        # p10 of the paired calls: interference from outside only adds time, a patched op slows every call
        if timed_ref.p10_ms > limit * res["ref_alone_ms"] and timed_ref.p10_ms - res["ref_alone_ms"] > margin:
            _flag(res, "reference_tampered", f"beside the submission the reference's p10 was {timed_ref.p10_ms:.4g} ms, "
                  f"alone before it was loaded its median was {res['ref_alone_ms']:.4g} ms (limit {limit}x)")
    stage("timing")

    dynamic_checks(mod, ref, cand, rules, device, precision, atol, rtol, res, ctx, job)
    stage("dynamic_checks")
    tampered = timing.timer_surface_changes(surface)
    if tampered:
        _flag(res, "timer_tampered", f"replaced during forward: {', '.join(tampered)}")
    _check_reference_surface(torch_surface, settings, kernels, res, "during forward")


def _paired_reference(mod, ref, rules, device, job, res):
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
        paired_type, alone = "torch_compile", (measured or {}).get("compile_ms")
    elif kind in EAGER_BASELINE_TYPES or kind is None:
        if measured and measured.get("eager_ms") is None:
            return None
        model, paired_type, alone = ref, "pytorch_eager", (measured or {}).get("eager_ms")
    else:
        return None
    if alone is None:
        alone = time_model(model, RotatingInputs(mod, rules, device, job), rules, device, job).median_ms
    res["ref_alone_ms"], res["ref_paired_type"] = alone, paired_type
    return model


class _Stages:
    """Wall seconds per pipeline stage, for the overhead benchmark."""

    def __init__(self, out: dict):
        self.out, self.t = out, timing._perf_counter()

    def __call__(self, name: str) -> None:
        now = timing._perf_counter()
        self.out[name] = now - self.t
        self.t = now


def _reference_surface() -> dict:
    """What a reference's forward can call, by dotted name: the functions of torch, torch.nn.functional,
    torch.linalg/fft/special and the Tensor methods, and the forward of every torch.nn module class.
    A submission that replaces one changes what the reference computes, or how fast it runs."""
    out = {}
    owners = {"torch": torch, "torch.nn.functional": torch.nn.functional, "torch.Tensor": torch.Tensor,
              "torch.linalg": torch.linalg, "torch.fft": torch.fft, "torch.special": torch.special}
    for prefix, owner in owners.items():
        for attr, value in list(vars(owner).items()):
            if callable(value) and not attr.startswith("__"):
                out[f"{prefix}.{attr}"] = (owner, attr)
    for attr, cls in list(vars(torch.nn).items()):
        if isinstance(cls, type) and issubclass(cls, torch.nn.Module):
            out[f"torch.nn.{attr}.forward"] = (cls, "forward")
    out["torch.nn.Module.__call__"] = (torch.nn.Module, "__call__")
    out["torch.nn.Module._call_impl"] = (torch.nn.Module, "_call_impl")
    return out


def _global_settings() -> dict:
    """Process-wide switches that change which kernels the reference runs."""
    b = torch.backends
    return {"cudnn.enabled": b.cudnn.enabled, "cudnn.benchmark": b.cudnn.benchmark,
            "cudnn.deterministic": b.cudnn.deterministic, "cudnn.allow_tf32": b.cudnn.allow_tf32,
            "cuda.matmul.allow_tf32": b.cuda.matmul.allow_tf32,
            "cuda.matmul.allow_fp16_reduced_precision_reduction": b.cuda.matmul.allow_fp16_reduced_precision_reduction,
            "cuda.matmul.allow_bf16_reduced_precision_reduction": b.cuda.matmul.allow_bf16_reduced_precision_reduction,
            "float32_matmul_precision": torch.get_float32_matmul_precision(),
            "deterministic_algorithms": torch.are_deterministic_algorithms_enabled(),
            "num_threads": torch.get_num_threads(),
            # a mode left on a stack intercepts every torch call the reference makes
            "torch_function_modes": torch._C._len_torch_function_stack(),
            "torch_dispatch_modes": torch._C._len_torch_dispatch_stack()}


def _dispatcher_kernels() -> dict:
    """Which kernel serves each operator already registered, for the dispatch keys that compute: a submission
    can re-register aten::gelu's CUDA kernel without changing any Python attribute (~0.1 s for ~3,600 ops)."""
    out = {}
    for name in torch._C._dispatch_get_all_op_names():
        lines = [ln for ln in torch._C._dispatch_dump(name).splitlines()
                 if ln.split(":", 1)[0].removesuffix(" (inactive)") in DISPATCH_KEYS]
        out[name] = "\n".join(lines)
    return out


def _check_reference_surface(snap: dict, settings: dict, kernels: dict, res: dict, when: str) -> None:
    replaced = timing.timer_surface_changes(snap)
    changed = [f"{k} set to {v!r}" for k, v in _global_settings().items() if settings.get(k) != v]
    now = _dispatcher_kernels()
    rerouted = [f"{op} re-registered in the dispatcher" for op, table in kernels.items() if now.get(op) != table]
    if replaced or changed or rerouted:
        what = ", ".join(replaced[:6] + changed + rerouted[:6])
        _flag(res, "reference_tampered", f"{when}: {what}")


def _harness_surface() -> dict:
    """The harness's own functions, so that patching them is seen like patching a timer."""
    import kb_data.harness.execute as me

    names = ["compare", "check_output_type", "make_inputs", "time_candidate", "check_correctness", "dynamic_checks"]
    out = {f"harness.{n}": (me, n) for n in names}
    out.update({f"harness.timing.{n}": (timing, n) for n in ("_perf_counter", "_cuda_sync", "_event_elapsed", "_event_record")})
    out.update({f"harness.timing.Timer.{n}": (timing.Timer, n) for n in ("run", "run_paired", "_timed")})
    out["harness.time_model"] = (me, "time_model")
    return out


def _call(model, inputs, seed: int, what: str):
    _manual_seed(seed)  # same RNG stream for candidate and reference (dropout, randn in forward)
    try:
        with torch.no_grad():
            return model(*inputs)
    except torch.cuda.OutOfMemoryError:
        raise
    except Exception as e:
        raise Stage("runtime_error", f"{what} forward raised {type(e).__name__}: {_first_lines(e)}")


def check_correctness(mod, ref, cand, rules, device, seeds, atol, rtol, res, ctx) -> bool:
    worst_abs, worst_rel, public_ok = 0.0, 0.0, True
    for i, seed in enumerate(seeds):
        secret = i >= len(rules["seeds"])
        inputs = make_inputs(mod, seed, device)
        ref_inputs = clone_inputs(inputs)  # untouched copy: the candidate cannot pre-write the reference's inputs
        in_spans = _storages(inputs)
        keep = _kept_spans(ref, ref_inputs)
        out = _call(cand, inputs, seed, "the candidate")
        timing.synchronize(device)
        why = check_output_type(out)
        if why:
            _flag(res, "lazy_output", why)
            raise Stage("rejected", why)
        reused = False
        for o in _outputs(out):
            if isinstance(o, torch.Tensor) and o.numel():
                span = _storages([o])[0]
                if _overlaps(span, in_spans):
                    _flag(res, "output_aliases_input", f"seed {seed}: the output shares storage with an input")
                reused |= span[0] in ctx["ref_ptrs"]
        # Kept as a copy: a CUDA-graph replay (torch.compile's reduce-overhead, a captured graph) returns the same
        # static buffers on every call, which the candidate's next call below (the bitwise repeat) overwrites.
        out = _copy_outputs(out)
        ref_out = _call(ref, ref_inputs, seed, "the reference")
        timing.synchronize(device)
        for o in _outputs(ref_out):
            if isinstance(o, torch.Tensor) and o.numel():
                ctx["ref_ptrs"].add(o.untyped_storage().data_ptr())
        passed, why, a, r = compare(ref_out, out, rules, atol, rtol)
        worst_abs, worst_rel = max(worst_abs, a), max(worst_rel, r)
        res.update(max_abs_err=worst_abs, max_rel_err=worst_rel)
        if not passed:
            if "cannot be graded" in (why or ""):
                raise Stage("runtime_error", why)
            if reused:  # an allocator reusing that memory is normal; returning it unwritten is the hack
                _flag(res, "output_reused_memory",
                      f"seed {seed}: the output lives where an earlier (poisoned) reference output was freed, and is wrong")
            if secret and public_ok:
                _flag(res, "stale_output", f"correct on the published seeds {rules['seeds']}, wrong on a secret seed: {why}")
                res["status"], res["error"] = "rejected", f"wrong on a secret seed only: {why}"
            else:
                res["status"], res["error"] = "incorrect", f"seed {seed}: {why}"
            return False
        if i == 0 and rules["require_bitwise_repeat"]:
            again = _call(cand, clone_inputs(ref_inputs), seed, "the candidate")
            timing.synchronize(device)  # asynchrony is judged by side_stream_check, not here
            if not all(torch.equal(x, y) for x, y in zip(_outputs(out), _outputs(again)) if isinstance(x, torch.Tensor)):
                _flag(res, "nondeterministic", f"seed {seed}: two runs on equal inputs differ bitwise")
        ctx["samples"].append((seed, [_sample(o) for o in _outputs(out) if isinstance(o, torch.Tensor)],
                               [_sample(o) for o in _outputs(ref_out) if isinstance(o, torch.Tensor)],
                               [_sample(x) for x in inputs if isinstance(x, torch.Tensor)]))
        if i == 0:
            ctx["first_inputs"] = ref_inputs
        _poison(ref_out, keep)
        del out, ref_out
    return True


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
        _manual_seed(self.seeds[k])


def time_candidate(mod, ref, cand, rules, device, atol, rtol, res, job, paired=None):
    """Median over the rule's trials. Each call gets other values in the same buffers, and its output is
    re-checked against the reference for those values: cached or replayed outputs fail. With `paired` (the eager
    reference, or its compiled form), that model is timed in the same loop, trial for trial: (candidate timing,
    reference timing or None)."""
    rot = RotatingInputs(mod, rules, device, job)
    sets, seeds, work, prepare = rot.sets, rot.seeds, rot.work, rot.prepare
    ref_outs = [_call(ref, clone_inputs(s), sd, "the reference") for s, sd in zip(sets, seeds)]
    again = _call(ref, clone_inputs(sets[0]), seeds[0], "the reference")
    recheck = compare(ref_outs[0], again, rules, atol, rtol)[0]  # a stateful reference cannot be re-checked
    _poison(again, _kept_spans(ref, [x for s in sets for x in s] + work))
    del again
    if not recheck:
        res["flag_details"]["recheck_skipped"] = "the reference itself is not repeatable (stateful forward)"
    stale = []

    pair = paired is not None
    call, call_reference = _forward_on(cand, work), _forward_on(paired, work) if pair else None

    def check(i, out):
        if recheck and not stale:
            ok, why, _, _ = compare(ref_outs[i % len(sets)], out, rules, atol, rtol)
            if not ok:
                stale.append(f"timed call {i}: {why}")

    def check_reference(i, out):
        # The same work after the reference's calls. A call right after a check runs ~7% slower on the H200
        # (the GPU idles through it and its clock drops), so checking one side only tilted paired ratios
        # ~0.6% towards the checked side (BENCHMARKS.md, Noise).
        compare(ref_outs[i % len(sets)], out, rules, atol, rtol)

    timer = timing.Timer(device, l2_flush=rules["l2_flush"])
    try:
        t, t_ref = timer.run_paired(call, call_reference,
                                    warmup=job.get("warmup", rules["warmup"]), trials=job.get("trials", rules["trials"]),
                                    prepare=prepare, check=check,
                                    check_other=check_reference if pair else None,
                                    min_timed_ms=job.get("min_timed_ms", timing.MIN_PAIRED_MS if pair else timing.MIN_TIMED_MS))
    except Stage:
        raise
    except torch.cuda.OutOfMemoryError:
        raise
    except Exception as e:
        raise Stage("runtime_error", f"the candidate raised while being timed: {type(e).__name__}: {_first_lines(e)}")
    if stale:
        _flag(res, "stale_output", f"an output did not match its call's inputs ({stale[0]})")
    _flush_check(t, t_ref, res)
    late = t.late_calls
    if late:
        _flag(res, "side_stream_work", f"{len(late)} timed call(s) (first: {late[0]}) were still writing their output "
              "after forward returned: work on another stream, outside the timed interval")
    return t, t_ref


FLUSH_SLOWDOWN = 1.10          # the flush ahead of the candidate's calls may take this much longer than the reference's ...
FLUSH_SLOWDOWN_MIN_MS = 0.004  # ... and this much more (the flush: 0.064-0.084 ms on the H200)


def _flush_check(t: timing.Timing, t_ref: timing.Timing | None, res: dict) -> None:
    """A timed call is queued right behind the L2 flush with no host sync between (timing.Timer._timed). On the
    caller's stream nothing runs before the flush ends; work on a stream that does not wait for the caller's can
    run during it, leave the timed interval, and slows the flush down by sharing the GPU with it. The flush's time
    also depends on what the call before left dirty in the L2 (up to +20 us for honest kernels on the H200), so it
    is judged against the flush ahead of the reference's calls in the same paired loop, where the ABBA order gives
    both sides the same predecessors; timed alone (no reference in the loop: `--no-pair`, or a torch.compile baseline
    on the CPU), it is only recorded."""
    if not t.flush_ms:
        return
    cand = statistics.median(t.flush_ms)
    ref = statistics.median(t_ref.flush_ms) if t_ref is not None and t_ref.flush_ms else None
    res["flag_details"]["flush_ms"] = {"candidate": cand, **({"reference": ref} if ref is not None else {})}
    if ref and cand > FLUSH_SLOWDOWN * ref and cand - ref > FLUSH_SLOWDOWN_MIN_MS:
        _flag(res, "side_stream_work", f"the L2 flush ahead of the candidate's timed calls took {cand * 1e3:.1f} us "
              f"(median), ahead of the reference's {ref * 1e3:.1f} us: work of forward on a stream that does not wait "
              "for the caller's ran during it, outside the timed interval")


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

FP64_CHECK_MAX_BYTES = 4 << 30  # the float64 copy of inputs and outputs must fit beside everything else


def _fp64_feasible(inputs, precision: str) -> bool:
    """Whether a float64 run of the reference on these inputs is meaningful (a floating precision class) and fits."""
    return (precision in PRECISION_FLOOR
            and sum(tensor_bytes(x) for x in inputs if isinstance(x, torch.Tensor)) <= FP64_CHECK_MAX_BYTES)


def _fp64_bound(e_ref: float, precision: str) -> float:
    """The largest error to float64 a candidate may have: a multiple of the reference's own, with a floor."""
    return max(PRECISION_FACTOR * e_ref, PRECISION_FLOOR[precision])


def dynamic_checks(mod, ref, cand, rules, device, precision, atol, rtol, res, ctx, job) -> None:
    inputs = ctx["first_inputs"]
    seed = rules["seeds"][0]
    checks = [
        # first: nothing the other checks leave behind (a profiler session, freed memory) can hide late writes
        ("side_stream", True, lambda: side_stream_check(cand, inputs, seed, device, res)),
        ("profile", job.get("require_custom_kernel", True),
         lambda: profile_checks(ref, cand, inputs, seed, device, precision, res)),
        ("constant", True, lambda: constant_check(res, ctx, atol, rtol)),
        ("degenerate", True, lambda: degenerate_checks(mod, ref, cand, rules, device, precision, atol, rtol, res, ctx)),
        ("fp64", job.get("check_fp64", True) and _fp64_feasible(inputs, precision),
         lambda: precision_check(ref, cand, inputs, seed, device, precision, res)),
        ("weights", True, lambda: weights_check(mod, ref, cand, rules, device, atol, rtol, res)),
    ]
    for name, enabled, run in checks:
        if not enabled:
            continue
        try:
            run()
        except torch.cuda.OutOfMemoryError:
            # the harness's own extra copies did not fit: no evidence either way, never a verdict on the submission
            res["flag_details"][f"{name}_check"] = "skipped: out of GPU memory"
            torch.cuda.empty_cache()


def _profile(model, inputs, seed, device):
    from torch.profiler import ProfilerActivity, profile

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    with profile(activities=acts) as prof:
        _call(model, clone_inputs(inputs), seed, "profiled")
        timing.synchronize(device)
    ops, kernels = set(), set()
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            kernels.add(e.name)
        elif e.name.startswith("aten::"):
            ops.add(e.name)
    return ops, kernels


def profile_checks(ref, cand, inputs, seed, device, precision, res) -> None:
    ref_ops, _ = _profile(ref, inputs, seed, device)
    cand_ops, cand_kernels = _profile(cand, inputs, seed, device)
    heavy = sorted((ref_ops & HEAVY_OPS) & cand_ops)
    if heavy:
        _flag(res, "calls_reference_ops", f"the candidate runs the reference's heavy ops: {', '.join(heavy)}")
    if device.type == "cuda":
        custom = sorted(k for k in cand_kernels if not FRAMEWORK_KERNEL_RE.search(k))
        res["flag_details"]["kernels"] = sorted(cand_kernels)[:40]
        if not custom:
            _flag(res, "no_custom_kernel", "the profiler saw only framework kernels"
                  + (f": {', '.join(sorted(cand_kernels)[:6])}" if cand_kernels else " (none at all)"))
        if precision == "fp32":
            low = sorted(k for k in cand_kernels if REDUCED_PRECISION_KERNEL_RE.search(k))
            if low:
                res["flag_details"]["reduced_precision_kernels"] = low[:10]
    else:
        # On CPU there are no kernels to see: a candidate whose forward is only framework ops did no own work.
        compute_ops = {o for o in cand_ops if o not in ("aten::empty", "aten::empty_like", "aten::empty_strided",
                                                         "aten::to", "aten::_to_copy", "aten::copy_", "aten::view",
                                                         "aten::contiguous", "aten::clone", "aten::detach")}
        res["flag_details"]["cpu_ops"] = sorted(cand_ops)[:40]
        if not compute_ops and not cand_kernels:
            res["flag_details"]["no_ops"] = "no aten compute op ran in the candidate's forward (custom CPU code)"


def side_stream_check(cand, inputs, seed, device, res) -> None:
    """Is the output still being written once forward has returned? Its value is copied on the caller's stream
    right away and compared with its value after a full device synchronization. The copies go into buffers
    allocated beforehand: an allocation here could reach cudaMalloc, which may synchronize the device and
    hide the late writes (as it did on the H200)."""
    snaps = None
    if device.type == "cuda":
        probe = _call(cand, clone_inputs(inputs), seed, "the candidate")
        torch.cuda.synchronize(device)
        snaps = [torch.empty_like(o) for o in _outputs(probe) if isinstance(o, torch.Tensor)]
        del probe
    threads_before = {t.ident for t in threading.enumerate()}
    out = _call(cand, clone_inputs(inputs), seed, "the candidate")
    outs = [o for o in _outputs(out) if isinstance(o, torch.Tensor)]
    copied = snaps is not None and [(s.shape, s.dtype) for s in snaps] == [(o.shape, o.dtype) for o in outs]
    if copied:
        for s, o in zip(snaps, outs):
            s.copy_(o.detach())  # enqueued on the caller's stream before anything else
    new_threads = [t for t in threading.enumerate() if t.ident not in threads_before and t.is_alive()]
    if copied:
        torch.cuda.synchronize(device)
        if not all(torch.equal(s, o) for s, o in zip(snaps, outs)):
            _flag(res, "side_stream_work", "the output was still being written after forward returned (work on another stream)")
    if new_threads:
        for t in new_threads:
            t.join(timeout=5)
        _flag(res, "side_stream_work", f"forward left {len(new_threads)} thread(s) running")


def _rel_change(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).abs().max()) / max(float(a.abs().max()), float(b.abs().max()), 1e-12)


def constant_check(res, ctx, atol, rtol) -> None:
    samples = ctx["samples"]
    if len(samples) < 2:
        return
    (_, c0, r0, _), rest = samples[0], samples[1:]
    for _, c, r, _ in rest:
        for a, b, ra, rb in zip(c0, c, r0, r):
            if a.numel() < 2:
                continue
            if _rel_change(a, b) <= CONSTANT_REL and _rel_change(ra, rb) > CONSTANT_REL:
                _flag(res, "constant_output", "the output did not change across seeds while the reference's did")
                return


def degenerate_checks(mod, ref, cand, rules, device, precision, atol, rtol, res, ctx) -> None:
    """A problem whose output is nearly constant, or nearly one of its inputs, under the suite's
    input distribution lets a trivial kernel pass. There the candidate must also be right on
    off-distribution inputs (standard normal, scaled)."""
    reason = degenerate_reason(ctx["samples"], atol, rtol)
    if not reason:
        return
    _flag(res, "degenerate_problem", reason)
    seed = rules["seeds"][0] + 7919
    _manual_seed(seed)
    off = [torch.randn_like(x) * 3 if isinstance(x, torch.Tensor) and x.is_floating_point() else x
           for x in ctx["first_inputs"]]
    out = _call(cand, clone_inputs(off), seed, "the candidate")
    ref_out = _call(ref, clone_inputs(off), seed, "the reference")
    if all(torch.isfinite(o.float()).all() for o in _outputs(ref_out) if isinstance(o, torch.Tensor)):
        passed, why, _, _ = compare(ref_out, out, rules, atol, rtol)
        del out, ref_out
        if passed:
            return
        # Zero-mean inputs 3x larger can put long reductions' rounding above an absolute tolerance (v0.1's
        # large-K matmul): an honest kernel fails there as well as a copy would. It is overfit only if it is also
        # much further from float64 than the reference is.
        errors = _fp64_errors(ref, cand, off, seed) if _fp64_feasible(off, precision) else None
        if isinstance(errors, list) and all(e_cand <= _fp64_bound(e_ref, precision) for e_ref, e_cand in errors):
            res["flag_details"]["off_distribution"] = (f"outside the tolerance ({why}), but as close to float64 as the "
                                                       f"reference: {errors}")
            return
        _flag(res, "input_overfit", f"right on the suite's inputs, wrong on off-distribution inputs: {why}")


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


def _fp64_errors(ref, cand, inputs, seed) -> list[tuple[float, float]] | str:
    """(reference's, candidate's) relative error to a float64 run of the reference, per floating output;
    a string saying why not where the float64 run is impossible."""
    try:
        ref64 = copy.deepcopy(ref).double()
        ins64 = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in clone_inputs(inputs)]
        out64 = _call(ref64, ins64, seed, "the float64 reference")
        del ref64
    except Exception as e:  # ops without float64 kernels: no evidence either way
        return f"skipped: {type(e).__name__}: {str(e)[:120]}"
    out32 = _call(ref, clone_inputs(inputs), seed, "the reference")
    outc = _call(cand, clone_inputs(inputs), seed, "the candidate")
    errors = []
    for o64, o32, oc in zip(_outputs(out64), _outputs(out32), _outputs(outc)):
        if isinstance(o64, torch.Tensor) and o64.is_floating_point() and isinstance(oc, torch.Tensor):
            denom = float(o64.norm()) or 1.0
            errors.append((float((o32.double() - o64).norm()) / denom, float((oc.double() - o64).norm()) / denom))
    return errors


def precision_check(ref, cand, inputs, seed, device, precision, res) -> None:
    """Error against a float64 reference: far above the reference's own error means lower precision."""
    errors = _fp64_errors(ref, cand, inputs, seed)
    if isinstance(errors, str):
        res["flag_details"]["fp64_check"] = errors
        return
    for e_ref, e_cand in errors[:1]:
        res["flag_details"]["fp64_rel_err"] = {"reference": e_ref, "candidate": e_cand}
        bound = _fp64_bound(e_ref, precision)
        low_kernels = res["flag_details"].get("reduced_precision_kernels")
        if e_cand > bound or (low_kernels and e_cand > 4 * e_ref + 1e-7):
            _flag(res, "precision_downgrade", f"error vs float64 {e_cand:.3g}, the reference's {e_ref:.3g} (bound {bound:.3g})"
                  + (f"; reduced-precision kernels: {', '.join(low_kernels[:3])}" if low_kernels else ""))


def weights_check(mod, ref, cand, rules, device, atol, rtol, res) -> None:
    """Perturb the reference's weights away from their default init and load them into the candidate:
    a candidate that hard-codes the default init (or ignores the weights) stops matching."""
    state = ref.state_dict()
    floats = {k: v for k, v in state.items() if v.is_floating_point() and v.numel()}
    if not floats:
        return
    cand_keys = set(cand.state_dict().keys())
    if not set(floats) <= cand_keys:
        res["flag_details"]["weights_check"] = "skipped: the candidate's state_dict keys differ from the reference's"
        return
    gen = torch.Generator(device="cpu").manual_seed(1234)
    perturbed = {}
    for k, v in state.items():
        if k in floats:
            noise = torch.randn(v.shape, generator=gen).to(v.device, v.dtype)
            scale = float(v.float().abs().mean()) or 1.0
            p = v * (1 + 0.25 * noise) if "running_var" in k else v + 0.25 * scale * noise
            perturbed[k] = p
        else:
            perturbed[k] = v
    ref_p = copy.deepcopy(ref)
    ref_p.load_state_dict(perturbed)
    cand.load_state_dict(perturbed, strict=False)
    seed = rules["seeds"][0]
    inputs = make_inputs(mod, seed, device)
    out = _call(cand, clone_inputs(inputs), seed, "the candidate")
    ref_out = _call(ref_p, clone_inputs(inputs), seed, "the reference")
    passed, why, _, _ = compare(ref_out, out, rules, atol, rtol)
    if not passed:
        _flag(res, "ignores_weights", f"with perturbed weights loaded: {why}")
