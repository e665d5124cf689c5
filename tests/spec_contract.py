"""Check problem files against their spec records (tests/specs/*.jsonl.gz).

Used by the contract tests and, while writing problems, from the shell:

    python tests/spec_contract.py --suite v3 [--numeric] [NAME_OR_ID ...]

prints one line per problem: OK, or every mismatch found.
"""
from __future__ import annotations

import argparse
import gzip
import json
import math
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from kb_data import meta as M, problems as P  # noqa: E402
from kb_data import targets  # noqa: E402

SPECS_DIR = Path(__file__).resolve().parent / "specs"
RANDOM_INIT_OPS = ("uniform_", "normal_", "randn", "rand", "randint", "random_", "bernoulli", "randperm",
                   "exponential_", "kaiming", "trunc_normal", "orthogonal", "xavier")


def load_specs(suite: str) -> list[dict]:
    with gzip.open(SPECS_DIR / f"{suite}.jsonl.gz", "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def spec_problem_id(rec: dict) -> str:
    return f"{rec['suite']}/{rec['category']}/{rec['name']}"


def problem_path(rec: dict, root: Path = ROOT / "problems") -> Path:
    return root / rec["suite"] / rec["category"] / rec["file"]


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        try:
            return math.isclose(float(a), float(b), rel_tol=1e-6, abs_tol=1e-12)
        except (TypeError, ValueError):
            return False
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


def _plain(v):
    if isinstance(v, torch.Tensor):
        return v.tolist()
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, torch.dtype):
        return str(v).replace("torch.", "")
    return v


class InitRecorder(M.TorchDispatchMode):
    """RNG-consuming aten ops during construction, in order."""

    def __init__(self):
        super().__init__()
        self.lines = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        name = func.__name__.split(".")[0]
        if name in ("uniform_", "normal_", "randn", "rand", "randint", "random_", "bernoulli_", "bernoulli",
                    "randperm", "exponential_", "rand_like", "randn_like", "randint_like", "cauchy_",
                    "log_normal_", "geometric_"):
            parts = [M.fmt_arg(a) for a in args]
            parts += [f"{k}={M.fmt_arg(v)}" for k, v in kwargs.items() if k not in M.AtenRecorder.DROP_KWARGS]
            self.lines.append(f"{func}({', '.join(parts)})->{M.fmt_arg(out)}")
        return out


def _trace_diff(expected: list[str], got: list[str], label: str, prefix_only: bool = False) -> list[str]:
    """Compare traces line by line. A pseudo-op line (`fla.ops.*`, a library call the problem replaces
    with pure PyTorch) splits the expected trace: the part before must open ours, the part after close it."""
    lib = [i for i, x in enumerate(expected) if not x.startswith("aten.")]
    if lib:
        head, tail = expected[:lib[0]], expected[lib[-1] + 1:]
        errs = _trace_diff(head, got[:len(head)], label + "(before library call)")
        if tail and not prefix_only:
            errs += _trace_diff(tail, got[-len(tail):], label + "(after library call)")
        return errs
    act = list(got)
    if prefix_only:
        act = act[:len(expected)]
    for i, (e, a) in enumerate(zip(expected, act)):
        if not M.trace_lines_equal(e, a):
            return [f"{label}[{i}]: expected {M.normalize_trace_line(e)} got {M.normalize_trace_line(a)}"]
    if len(expected) != len(act):
        nxt_e = M.normalize_trace_line(expected[len(act)]) if len(expected) > len(act) else "-"
        nxt_a = M.normalize_trace_line(act[len(expected)]) if len(act) > len(expected) else "-"
        return [f"{label}: expected {len(expected)} ops, got {len(act)} (next expected: {nxt_e}; next got: {nxt_a})"]
    return []


def check_static(rec: dict, root: Path = ROOT / "problems") -> list[str]:
    """Everything checkable without real compute: interface, state, inputs, outputs, trace, FLOPs, bytes."""
    errs: list[str] = []
    path = problem_path(rec, root)
    if not path.exists():
        return [f"missing file {path}"]
    try:
        lp = P.load_problem(path, root)
    except P.ProblemError as e:
        return [str(e)]
    mod = lp.module
    for k, v in (rec.get("constants") or {}).items():
        if rec["suite"] == "v0.1" and rec["category"] == "level4" and k == "config":
            continue  # a transformers config object; checked through init and state
        if not hasattr(mod, k):
            errs.append(f"constant {k} missing")
        elif not _same(_plain(getattr(mod, k)), v):
            errs.append(f"constant {k} = {_plain(getattr(mod, k))!r}, spec {v!r}")
    if "gpus" in rec and targets.gpus_for(lp.problem_id) != rec["gpus"]:
        errs.append(f"swept on {targets.gpus_for(lp.problem_id)}, spec {rec['gpus']}")
    for k, v in (rec.get("metadata") or {}).items():
        if not hasattr(mod, k):
            errs.append(f"metadata {k} missing")
        elif k == "CUTILE_REFERENCE_SNIPPET":
            if not isinstance(getattr(mod, k), str) or not getattr(mod, k).strip():
                errs.append("CUTILE_REFERENCE_SNIPPET must be a non-empty string")
        elif not _same(_plain(getattr(mod, k)), v):
            errs.append(f"metadata {k} = {_plain(getattr(mod, k))!r}, spec {v!r}")
    import inspect
    init_params = [p for p in inspect.signature(mod.Model.__init__).parameters if p != "self"]
    fwd_params = [p for p in inspect.signature(mod.Model.forward).parameters if p != "self"]
    if "init_signature" in rec and init_params != rec["init_signature"]:
        errs.append(f"__init__ parameters {init_params}, spec {rec['init_signature']}")
    if "forward_signature" in rec and fwd_params != rec["forward_signature"]:
        errs.append(f"forward parameters {fwd_params}, spec {rec['forward_signature']}")
    if not (rec["suite"] == "v0.1" and rec["category"] == "level4"):
        init_vals = _plain(list(mod.get_init_inputs()))
        spec_init = [a["value"] for a in rec.get("init_args") or []]
        if not _same(init_vals, spec_init):
            errs.append(f"get_init_inputs() = {init_vals!r:.200}, spec {spec_init!r:.200}")
    spec_inputs = rec.get("inputs") or []
    tensor_names = [i["name"] for i in spec_inputs]
    if fwd_params[:len(tensor_names)] != tensor_names and "forward_signature" not in rec:
        errs.append(f"forward parameters {fwd_params}, spec inputs {tensor_names}")

    # the specs keep a long trace's first 2000 lines: one more shows a longer trace, a full one costs seconds
    trace_max = max(2001, len(rec.get("aten_trace") or rec.get("aten_trace_partial") or []) + 1)
    meta = M.analyze_on(lp, "meta", with_trace=True, trace_max=trace_max)
    # transformers asks .item() of its inputs (mask or padding checks); the spec's recorder answered those
    # as on real inputs, so on meta the trace is compared up to that point only.
    hf_item = bool(meta.error and ".item()" in meta.error and "transformers" in (lp.metadata.get("REQUIRES") or []))
    if meta.error and not hf_item:
        meta = M.analyze_on_meta(lp, with_trace=True, trace_max=trace_max)  # data-dependent forwards fall back to a CPU run
    if meta.state_dict is not None:
        exp_sd = [[k, list(s), d] for k, s, d in rec.get("state_dict") or []]
        if meta.state_dict != exp_sd:
            exp_keys, got_keys = [x[0] for x in exp_sd], [x[0] for x in meta.state_dict]
            if exp_keys != got_keys:
                errs.append(f"state_dict keys differ: missing {[k for k in exp_keys if k not in got_keys][:5]}, "
                            f"extra {[k for k in got_keys if k not in exp_keys][:5]}, order same: {sorted(exp_keys) == sorted(got_keys)}")
            else:
                bad = [(e, g) for e, g in zip(exp_sd, meta.state_dict) if e != g][:3]
                errs.append(f"state_dict shapes/dtypes differ: {bad}")
    if meta.inputs is not None:
        if len(meta.inputs) != len(spec_inputs):
            errs.append(f"get_inputs() gives {len(meta.inputs)} items, spec {len(spec_inputs)}")
        for got, exp in zip(meta.inputs, spec_inputs):
            if exp.get("kind", "tensor") == "tensor":
                if got["shape"] != exp["shape"] or got["dtype"] != exp["dtype"]:
                    errs.append(f"input {exp['name']}: {got['dtype']}{got['shape']}, spec {exp['dtype']}{exp['shape']}")
                g = exp.get("generator", "")
                if g in ("randn", "rand") or g.startswith("randint"):
                    if got.get("generator") not in (g.replace(" ", ""), f"derived({g.replace(' ', '')})"):
                        errs.append(f"input {exp['name']}: generator {got.get('generator')}, spec {g}")
    has_trace = rec.get("aten_trace") is not None
    if meta.error and has_trace and not hf_item:
        errs.append(f"meta run failed: {meta.error}")
    if not meta.error:
        exp_out = [{"shape": o["shape"], "dtype": o["dtype"]} for o in rec.get("outputs") or []]
        if exp_out and meta.outputs != exp_out:
            errs.append(f"outputs {meta.outputs}, spec {exp_out}")
        if rec.get("flops") is not None and has_trace and meta.flops != rec["flops"]:
            errs.append(f"flops {meta.flops}, spec {rec['flops']}")
        if rec.get("min_bytes") is not None and meta.min_bytes != rec["min_bytes"]:
            errs.append(f"min_bytes {meta.min_bytes}, spec {rec['min_bytes']} ({meta.min_bytes_parts})")
    if has_trace:
        cut = len(rec["aten_trace"]) >= 2000
        if hf_item:
            errs += _trace_diff(rec["aten_trace"][:len(meta.trace or [])], meta.trace or [], "aten_trace (up to .item())")
        else:
            errs += _trace_diff(rec["aten_trace"], meta.trace or [], "aten_trace", prefix_only=cut)
    elif rec.get("aten_trace_partial") is not None:
        errs += _trace_diff(rec["aten_trace_partial"], meta.trace or [], "aten_trace_partial", prefix_only=True)
    if rec.get("init_trace"):
        rec_init = InitRecorder()
        try:
            with rec_init:
                M.build_model(lp, "meta")
        except Exception as e:
            errs.append(f"construction on meta failed: {type(e).__name__}: {e}")
        else:
            errs += _trace_diff([x.split("  =>")[0] for x in rec["init_trace"]], rec_init.lines, "init_trace")
    return errs


def _stats_close(got: float, exp, scale: float, rel: float) -> bool:
    exp = float(exp)  # the spec writes non-finite statistics as strings ('inf', 'nan')
    if not math.isfinite(exp) or not math.isfinite(got):
        return got == exp or (math.isnan(got) and math.isnan(exp))
    return abs(got - exp) <= rel * max(abs(exp), scale, 1e-6)


SLOW_ON_CPU = ("bfloat16", "float16", "int8", "uint8", "float8_e4m3fn")  # no fast CPU GEMM/conv paths


def numeric_cost(rec: dict) -> float:
    """Rough CPU cost of the fingerprint run: FLOPs plus bytes touched, x20 for dtypes without fast CPU kernels."""
    cost = float(rec.get("flops") or 0) + 20.0 * float(rec.get("min_bytes") or 0)
    slow = any(i.get("dtype") in SLOW_ON_CPU for i in rec.get("inputs") or [])
    return cost * (20.0 if slow else 1.0)


def _abs_mean(t: torch.Tensor) -> torch.Tensor:
    """|t|.mean() as one reduction: no |t| the size of a GB-sized output is made (its pages cost more than the sum)."""
    return torch.linalg.vector_norm(t, 1) / t.numel()


def check_numeric(rec: dict, root: Path = ROOT / "problems") -> list[str]:
    """The spec's CPU fingerprints: inputs after seed 42, state sums after seed 0, output statistics."""
    errs: list[str] = []
    lp = P.load_problem(problem_path(rec, root), root)
    mod = lp.module
    torch.manual_seed(42)
    inputs = list(mod.get_inputs())
    after_inputs = torch.get_rng_state()  # the forward below runs from here, as after a second get_inputs() would
    for x, spec in zip(inputs, rec.get("inputs") or []):
        chk = spec.get("check_seed42")
        if not chk or not isinstance(x, torch.Tensor):
            continue
        xf = x.detach().double().flatten()
        first = xf[:len(chk.get("first", []))].tolist()
        if not all(abs(a - b) <= 1e-5 * max(1.0, abs(b)) for a, b in zip(first, chk.get("first", []))):
            errs.append(f"input {spec['name']} first values {first}, spec {chk['first']}")
        abs_mean = None  # |x|.mean(), the tolerance's scale: one pass over a large input, not one per statistic
        for key in ("sum", "mean", "std", "min", "max"):
            if key in chk and chk[key] is not None:
                got = getattr(xf, key)().item() if key != "std" else (xf.std().item() if xf.numel() > 1 else 0.0)
                if abs_mean is None:
                    abs_mean = float(_abs_mean(xf))
                if not _stats_close(got, chk[key], abs_mean * (xf.numel() ** 0.5 if key == "sum" else 1), 1e-4):
                    errs.append(f"input {spec['name']} {key} {got}, spec {chk[key]}")
    out_chk, state_chk = rec.get("output_check_cpu"), rec.get("state_check_seed0")
    if not out_chk and not state_chk:
        return errs
    torch.manual_seed(0)
    model = M.build_model(lp, "cpu")
    for k, v in model.state_dict().items():
        if state_chk and k in state_chk and state_chk[k] is not None:
            got = v.double().sum().item()
            if not _stats_close(got, state_chk[k], float(v.double().abs().sum()) * 1e-3, 1e-4):
                errs.append(f"state {k} sum {got}, spec {state_chk[k]}")
    if state_chk:
        missing = set(state_chk) - set(model.state_dict())
        if missing:
            errs.append(f"state keys in fingerprint but not in model: {sorted(missing)[:5]}")
    if out_chk:
        torch.set_rng_state(after_inputs)
        recorder = M.AtenRecorder()
        with torch.no_grad(), recorder:
            out = model(*inputs)
        if rec.get("aten_trace_cpu"):
            errs += _trace_diff(rec["aten_trace_cpu"], recorder.lines, "aten_trace_cpu")
        out = out[0] if isinstance(out, (tuple, list)) else out
        of = out.detach().double().flatten()
        # The same values as of[torch.isfinite(of)], without the mask (a pass over a GB-sized output slower than the
        # sum) when every value is finite: a NaN or an inf anywhere makes the float64 sum non-finite, and float32 values
        # cannot overflow it (a float64 output that did would only take the masked way). The mask from the output's own
        # dtype, as float -> double keeps (non-)finiteness.
        total = of.sum()
        finite = of if math.isfinite(float(total)) else of[torch.isfinite(of if out.is_complex() else out.detach().flatten())]
        if list(out.shape) != out_chk["shape"]:
            errs.append(f"output shape {list(out.shape)}, spec {out_chk['shape']}")
        abs_mean = _abs_mean(finite) if finite.numel() else None  # the scale and the abs_mean statistic
        scale = float(abs_mean) if finite.numel() else 1.0
        for key in ("sum", "mean", "abs_mean", "std", "min", "max"):
            exp = out_chk.get(key)
            if exp is None or not math.isfinite(float(exp)):
                continue  # statistics over non-finite outputs (+inf misses) are compared through `first`
            src = finite  # the finite values (all of them when none is non-finite)
            got = {"sum": lambda t: total if t is of else t.sum(), "mean": lambda t: t.mean(),
                   "abs_mean": lambda t: abs_mean if abs_mean is not None else _abs_mean(t),
                   "std": lambda t: t.std(), "min": lambda t: t.min(), "max": lambda t: t.max()}[key](src).item()
            tol_scale = scale * (src.numel() ** 0.5 if key == "sum" else 1)
            if not _stats_close(got, exp, tol_scale, 2e-3):
                errs.append(f"output {key} {got}, spec {exp}")
        first = of[:len(out_chk.get("first", []))].tolist()
        for a, b in zip(first, out_chk.get("first", [])):
            b = float(b)
            if (math.isfinite(b) and abs(a - b) > 2e-3 * max(abs(b), scale)) or (not math.isfinite(b) and a != b):
                errs.append(f"output first values {first}, spec {out_chk['first']}")
                break
    return errs


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite", default="v3")
    ap.add_argument("--numeric", action="store_true", help="also the CPU fingerprints (can be slow)")
    ap.add_argument("--max-cost", type=float, default=2e11)
    ap.add_argument("names", nargs="*", help="problem names, ids or categories (default: all)")
    args = ap.parse_args(argv)
    recs = load_specs(args.suite)
    if args.names:
        recs = [r for r in recs if any(n in (r["name"], r["file"], r["category"], spec_problem_id(r),
                                             f"{r['category']}/{r['name']}") for n in args.names)]
    bad = 0
    for rec in recs:
        errs = check_static(rec)
        if args.numeric and not errs and numeric_cost(rec) <= args.max_cost:
            try:
                errs = check_numeric(rec)
            except Exception as e:
                errs = [f"numeric run failed: {type(e).__name__}: {e}"]
        pid = spec_problem_id(rec)
        if errs:
            bad += 1
            print(f"FAIL {pid}")
            for e in errs:
                print(f"     {e}")
        else:
            print(f"OK   {pid}")
    print(f"{len(recs) - bad}/{len(recs)} ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
