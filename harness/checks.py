"""The anti-cheat checks, one entry per flag: where it is decided, what decides it, and why.

`where`: `judge` (decided in the trusted judge from outputs and clocks the submission cannot reach),
`claim` (evidence reported by the candidate's own process: a submission that forges it dodges the check,
SECURITY.md), or `parent` (the grading parent: source scan, roofline). Whether a flag fails a record is the
suite's `fail_flags` in kb_data/rules.py. README's hack table is tested against this registry
(tests/test_sandbox.py): adding a check is an entry here, its code, and a corpus entry.
"""
from __future__ import annotations

import secrets
import warnings
from dataclasses import dataclass

import torch

from kb_data.harness import timing
from kb_data.harness.channel import ChannelError
from kb_data.harness.reference import (FP64_CHECKED, Stage, _call, _fp64_feasible, _outputs, _rel_change, batch_rows,
                                       clone_inputs, compare, degenerate_reason, out_of_memory, rows_apart)
from kb_data.harness.profiled import profile_checks
from kb_data.harness.session import (HEAVY_MIN_NUMEL, HEAVY_VALUES, draw_seed, flag, fresh_inputs, heavy_values,
                                     judged, off_distribution, run_candidate, weight_slots)
from kb_data.schema import FLAGS


@dataclass(frozen=True)
class Check:
    flag: str
    where: str
    decided_by: str   # the function, as module:qualname
    rationale: str


CHECKS = {c.flag: c for c in (
    Check("output_aliases_input", "claim", "kb_data.harness.candidate:Server._deliver",
          "an output that is an input's storage did no work of its own"),
    Check("output_reused_memory", "judge", "kb_data.harness.judge:check_correctness",
          "kept for older records: no reference output ever lives in the candidate's process now"),
    Check("side_stream_work", "claim", "kb_data.harness.timed:_flush_check",
          "work left running after forward returns, or hidden in the L2 flush, is not timed"),
    Check("timer_tampered", "judge", "kb_data.harness.timed:_bound_claims",
          "a reported time the judge's own clock contradicts was made up"),
    Check("reference_tampered", "judge", "kb_data.harness.timed:time_paired",
          "a paired reference much slower than alone was slowed from outside"),
    Check("nondeterministic", "judge", "kb_data.harness.judge:check_correctness",
          "two runs on equal inputs must be bitwise equal (v3)"),
    Check("no_custom_kernel", "claim", "kb_data.harness.profiled:profile_checks",
          "only framework or vendor kernels ran: no kernel of its own"),
    Check("calls_reference_ops", "claim", "kb_data.harness.profiled:profile_checks",
          "the reference's heavy work done by the framework or a vendor library, under any name"),
    Check("precision_downgrade", "judge", "kb_data.harness.checks:precision_check",
          "error to a float64 reference far above the reference's own: lower precision than the problem's"),
    Check("constant_output", "judge", "kb_data.harness.checks:constant_check",
          "an output that does not move with its inputs while the reference's does"),
    Check("degenerate_problem", "judge", "kb_data.harness.checks:degenerate_checks",
          "the problem's output barely depends on its inputs: informs the reader"),
    Check("ignores_weights", "judge", "kb_data.harness.checks:secret_weights",
          "an output that does not follow secretly perturbed weights hard-codes the default init or a cached copy"),
    Check("input_overfit", "judge", "kb_data.harness.checks:degenerate_checks",
          "right only on the suite's inputs: wrong off a degenerate problem's distribution, or where a few values "
          "decide a reduction the float64 comparison cannot cover"),
    Check("stale_output", "judge", "kb_data.harness.timed:time_paired",
          "an output that does not match its own call's fresh inputs was cached, replayed or precomputed"),
    Check("profile_mismatch", "claim", "kb_data.harness.profiled:observed_as_timed",
          "a profiled call that did far more work than the timed calls took behaves differently when observed"),
    Check("lazy_output", "judge", "kb_data.harness.session:Candidate.outputs",
          "a tensor subclass, or a tuple or list subclass around the outputs, can defer or fake the work until someone "
          "reads it"),
    Check("exceeds_roofline", "parent", "kb_data.harness.grade:_speed_checks",
          "faster than the GPU's peak compute and bandwidth allow (on a CPU: its peaks as measured by the parent)"),
    Check("excessive_speedup", "parent", "kb_data.harness.grade:_speed_checks",
          "a speedup over the rules' bound is worth a look (informational)"),
    Check("check_failed", "judge", "kb_data.harness.checks:dynamic_checks",
          "a check that could not run is never a pass"),
    Check("seed_independent_inputs", "judge", "kb_data.harness.judge:check_correctness",
          "the problem's inputs ignore the seed: the harness varied them itself (informational)"),
)}

assert set(CHECKS) == set(FLAGS), sorted(set(FLAGS) ^ set(CHECKS))  # every flag has exactly one entry


# ---------------------------------------------------------------------------
# The dynamic checks: each on its own fresh secret inputs; one that cannot run fails the record (check_failed)


def dynamic_checks(cand, mod, ref, state, rules, device, precision, atol, rtol, res, ctx, job) -> None:
    checks = [
        ("profile", job.get("require_custom_kernel", True),
         lambda: profile_checks(cand, mod, ref, rules, device, precision, atol, rtol, res, ctx, job)),
        ("constant", True, lambda: constant_check(res, ctx, rules)),
        ("degenerate", True, lambda: degenerate_checks(cand, mod, ref, rules, device, precision, atol, rtol, res, ctx)),
        ("fp64", job.get("check_fp64", True), lambda: precision_check(cand, mod, ref, rules, device, precision, res, ctx)),
        ("weights", True, lambda: weights_check(cand, mod, ref, state, rules, device, atol, rtol, res, ctx)),
    ]
    for name, enabled, run in checks:
        if not enabled:
            continue
        t0 = timing._perf_counter()
        try:
            run()
        except Stage:
            raise
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            flag(res, "check_failed", f"{name}: out of GPU memory")
        except ChannelError as e:
            flag(res, "check_failed", f"{name}: the candidate's reply was unusable ({e})")
        finally:  # where the dynamic checks' share of the GPU-locked time goes (the throughput benchmark)
            res["stage_s"][f"dynamic_checks.{name}"] = timing._perf_counter() - t0


def twin_inputs(inputs: list, donor: list) -> tuple[list, tuple | None]:
    """The inputs again with one secretly drawn value of the first floating tensor replaced by the value at the same
    place of `donor` (other inputs of the suite: the same distribution, so a candidate cannot tell the pair, and
    unlike a swap it moves sums of the values too), and where: (input index, flat position)."""
    for j, x in enumerate(inputs):
        if isinstance(x, torch.Tensor) and x.is_floating_point() and x.numel() >= 2:
            flat, other = x.contiguous().view(-1), donor[j].contiguous().view(-1)
            places = torch.tensor([secrets.randbelow(x.numel()) for _ in range(32)], device=x.device)
            moved = (flat[places].double() - other[places].double()).abs().nan_to_num(0.0)
            if not bool(moved.max() > 0):
                break
            # of 32 secret places, the one the donor moves most: a replayed output is then wrong past the tolerance
            # where the place reaches (a nearly equal value let a replay pass as right)
            a = int(places[moved.argmax()])
            y = flat.clone()
            y[a] = other[a]
            return [*inputs[:j], y.view(x.shape), *inputs[j + 1:]], (j, a)
    return list(inputs), None


def reached(ref, inputs: list, where: tuple, rng: int, rebuild=None) -> list | str:
    """Per output of the reference, which values depend on the place `where` names: a NaN tangent there, carried
    forward by forward-mode AD, spreads to every value computed from it (a row's or a sample's reduction included,
    where the change moves a value by less than its rounding), while the values themselves stay finite (a NaN value
    could become an index and stop a GPU). A string says why it cannot be told. Where the NaN reaches every value,
    it may have crossed products with exact zeros (0 x NaN is NaN: a sparse matrix held dense, masked attention),
    which leave a value's bits as they were: a float64 copy of the reference (`rebuild`) carries a tangent of one
    instead, which stays zero exactly there (red team, session 35: the twin compared nothing on a sparse matvec)."""
    masks = _tangent_reach(ref, inputs, where, rng, nan=True)
    if isinstance(masks, list) and rebuild is not None and all(m is None or bool(m.all()) for m in masks):
        try:
            finite = _tangent_reach(*float64_copies(ref, inputs, rebuild), where, rng, nan=False)
        except Exception as e:  # no float64 kernels, or no memory for them: the NaN's reach stands
            finite = f"{type(e).__name__}: {str(e)[:120]}"
        if isinstance(finite, list) and len(finite) == len(masks):
            masks = [m if f is None or m is None else f.to(m.device) for m, f in zip(masks, finite)]
    return masks


def _tangent_reach(ref, inputs: list, where: tuple, rng: int, nan: bool) -> list | str:
    """Which output values a tangent at `where` reaches: a NaN one where it is NaN, a tangent of one where it is not
    zero."""
    j, a = where
    tangent = torch.zeros_like(inputs[j])
    tangent.view(-1)[a] = float("nan") if nan else 1.0
    timing.manual_seed(rng)
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.filterwarnings("ignore", "`torch.jit.script` is deprecated", DeprecationWarning)  # torch.func's own
            _, out = torch.func.jvp(lambda x: ref(*inputs[:j], x, *inputs[j + 1:]), (inputs[j],), (tangent,))
    except Exception as e:  # ops without a forward-mode formula: the problem's property, the same for everyone
        return f"{type(e).__name__}: {str(e)[:120]}"
    return [(o.isnan() if nan else o != 0) if isinstance(o, torch.Tensor) and o.is_floating_point() else None
            for o in _outputs(out)]


def repeat_differs(first: tuple, twin: tuple, reach: list) -> str | None:
    """Why the candidate's outputs of a timed call and of its twin (twin_inputs) differ bitwise where the redrawn
    place cannot reach (`reach`, and where the reference's two outputs are bitwise equal); None when they do not.
    `first` and `twin` are each (candidate's outputs, reference's outputs)."""
    same = lambda a, b: (a == b) | (a.isnan() & b.isnan()) if a.is_floating_point() else a == b
    for k, (c1, c2, r1, r2, m) in enumerate(zip(first[0], twin[0], _outputs(first[1]), _outputs(twin[1]), reach)):
        if not all(isinstance(t, torch.Tensor) for t in (c1, c2, r1, r2, m)):
            continue
        keep = same(r1, r2) & ~m.to(r1.device)  # the pair may wait on the host (timed._kept), the mask not
        differ = int((~same(c1, c2) & keep).sum())
        if differ:
            return f"output {k}: {differ} of the {int(keep.sum())} values the redrawn place cannot reach differ bitwise"
    return None


def constant_check(res, ctx, rules) -> None:
    """Outputs that do not move across seeds while the reference's do (one-element outputs included)."""
    samples = ctx["samples"]
    if len(samples) < 2:
        flag(res, "check_failed", "constant: fewer than two correctness samples")
        return
    (_, c0, r0, _), rest = samples[0], samples[1:]
    rel = rules["constant_rel"]
    for _, c, r, _ in rest:
        for a, b, ra, rb in zip(c0, c, r0, r):
            if _rel_change(a, b) <= rel and _rel_change(ra, rb) > rel:
                flag(res, "constant_output", "the output did not change across seeds while the reference's did")
                return


HEAVY_OUT_MAX = 16  # a reduction to at most this many values ...
# ... gets its few values multiplied by the first of these (a linear loss over 10^9 values needs 1e8; steps of 10 keep
# the rest of the values a fair share of the output, which an honest kernel's partial sums must not lose) ...
HEAVY_FACTORS = tuple(10.0 ** k for k in range(2, 11))
HEAVY_SHIFT = 20.0  # ... that moves the reference's output by this many times the suite's tolerance


def heavy_due(inputs: list, out_meta: list, precision: str) -> bool:
    """A reduction of large inputs to a few values (a loss, a norm) too large for the float64 comparison, which has
    no rows to cut there: only a probe of a few dominant values tells a kernel that samples its inputs (a loss over a
    1% sample met the suite's 1e-2 tolerance: red team, session 51)."""
    outs = [o for o in out_meta if isinstance(o, torch.Tensor) and o.is_floating_point()]
    return (bool(outs) and sum(o.numel() for o in outs) <= HEAVY_OUT_MAX and not _fp64_feasible(inputs, out_meta, precision)
            and any(isinstance(x, torch.Tensor) and x.is_floating_point() and x.numel() >= HEAVY_MIN_NUMEL
                    for x in inputs))


def heavy_probe(ref, mod, device, atol, rtol, res, ctx) -> None:
    """The factor for the timed loop's dominance probes (`heavy_values`): the first that moves the reference's output
    by HEAVY_SHIFT tolerances with every value finite; none where none does (its output is not decided by a few
    values: nothing to probe), said in the record."""
    floats = lambda out: [o.double() for o in _outputs(out) if isinstance(o, torch.Tensor) and o.is_floating_point()]  # noqa: E731
    try:
        inputs, rng = fresh_inputs(mod, device, ctx), draw_seed()
        base = floats(_call(ref, clone_inputs(inputs), rng, "the reference"))
        for factor in HEAVY_FACTORS:
            moved = floats(_call(ref, heavy_values(inputs, device, factor, draw_seed()), rng, "the reference"))
            if not all(torch.isfinite(o).all() for o in moved):
                break
            if max(((m - b).abs() / (atol + rtol * b.abs())).max().item() for m, b in zip(moved, base)) >= HEAVY_SHIFT:
                ctx["heavy"] = factor
                return
    except Exception as e:  # a check that could not run is never a pass
        if not out_of_memory(e):
            raise
        flag(res, "check_failed", f"heavy probe: out of memory for the reference's runs ({str(e)[:120]})")
        return
    res["flag_details"]["heavy_probe"] = (f"not run: {HEAVY_VALUES} values of each input multiplied by up to "
                                          f"{HEAVY_FACTORS[-1]:g} did not move the reference's output by "
                                          f"{HEAVY_SHIFT:g} tolerances with every value finite")


def degenerate_checks(cand, mod, ref, rules, device, precision, atol, rtol, res, ctx) -> None:
    """On a problem whose output is nearly constant or nearly an input under the suite's inputs, the candidate
    must also be right on off-distribution inputs (standard normal, scaled by 3; in the timed loop also such values
    scattered through the suite's inputs), unless it is as close to float64 as the reference is there. And where a
    reduction's few dominant values were probed in the timed loop (`heavy_probe`), it must have been right there."""
    if ctx.get("timed_heavy"):
        flag(res, "input_overfit", f"right on the suite's inputs, wrong where {HEAVY_VALUES} of their values, "
             f"multiplied by {ctx['heavy']:g}, decide the output (a timed call): {ctx['timed_heavy']}")
    reason = degenerate_reason(ctx["samples"], atol, rtol)
    if not reason:
        return
    flag(res, "degenerate_problem", reason)
    timed = ctx.get("timed_off")  # the same check, run as one of the timed calls (indistinguishable from them)
    if timed is not None and not timed[0] and not _as_close_as_the_reference(res, ref, timed[2], timed[3], timed[4],
                                                                               precision, rules, ctx["rebuild"]):
        flag(res, "input_overfit", f"right on the suite's inputs, wrong on off-distribution inputs (a timed call): "
             f"{timed[1]}")
        return
    off = off_distribution(fresh_inputs(mod, device, ctx), device)
    rng = draw_seed()
    ref_out = _call(ref, clone_inputs(off), rng, "the reference")
    if not all(torch.isfinite(o.float()).all() for o in _outputs(ref_out) if isinstance(o, torch.Tensor)):
        return
    _, outs, why = run_candidate(cand, off, ref_out, rng, "degenerate check")
    passed, why, _, _ = judged(ref_out, outs, why, rules, atol, rtol)
    if passed:
        return
    if _as_close_as_the_reference(res, ref, outs, off, rng, precision, rules, ctx["rebuild"]):
        res["flag_details"]["off_distribution"] = f"outside the tolerance ({why}), but as close to float64 as the reference"
        return
    flag(res, "input_overfit", f"right on the suite's inputs, wrong on off-distribution inputs: {why}")


def _as_close_as_the_reference(res, ref, outs, inputs, rng, precision, rules, rebuild) -> bool:
    """Outputs outside the tolerance that are still as close to float64 as the reference's (rounding, not overfit)."""
    if outs is None or not _fp64_feasible(inputs, outs, precision):
        return False
    errors = fp64_errors_or_flag(res, "degenerate", ref, outs, inputs, rng, rebuild)
    return isinstance(errors, list) and all(ec <= _fp64_bound(er, precision, rules) for er, ec in errors)


def _fp64_bound(e_ref: float, precision: str, rules: dict) -> float:
    return max(rules["precision_factor"] * e_ref,
               rules["precision_floor"] * rules.get(f"precision_floor_scale_{precision}", 1.0))


def reference_copy(ref, rebuild, state: dict | None = None):
    """Another instance of the reference holding `state` (default: the reference's own), built again from the
    problem: a deepcopy would share whatever a closure of the model holds (v3 44_MiniGPTBlock's MLP is a lambda
    over the original's modules, so a deepcopy's MLP kept the original weights)."""
    new = rebuild()
    new.load_state_dict(ref.state_dict() if state is None else state)
    return new


def float64_copies(ref, inputs: list, rebuild) -> tuple:
    """A float64 instance of the reference (its own weights, built again: reference_copy) and float64 copies of the
    inputs' floating tensors (the rest as they are)."""
    return (reference_copy(ref, rebuild).double(),
            [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in clone_inputs(inputs)])


def fp64_errors_or_flag(res, where: str, ref, cand_outs, inputs, rng, rebuild) -> list[tuple[float, float]] | str | None:
    """_fp64_errors, where a comparison that could not get its memory is a check that could not run (check_failed,
    never a pass): None then."""
    try:
        return _fp64_errors(ref, cand_outs, inputs, rng, rebuild)
    except Exception as e:
        if not out_of_memory(e):
            raise
        flag(res, "check_failed", f"{where}: out of memory for the float64 reference ({str(e)[:120]})")
    if torch.cuda.is_initialized():
        torch.cuda.empty_cache()
    return None


def _fp64_errors(ref, cand_outs, inputs, rng, rebuild) -> list[tuple[float, float]] | str:
    """(reference's, candidate's) relative error to a float64 run of the reference, for every floating output.
    The float64 reference runs here, where the submission cannot reach; a string says why it could not."""
    try:
        ref64, ins64 = float64_copies(ref, inputs, rebuild)
        out64 = _call(ref64, ins64, rng, "the float64 reference")
        del ref64
    except Exception as e:  # ops without float64 kernels: a property of the problem, the same for every submission
        if out_of_memory(e):  # not one: the candidate shares the device and the host, and can hold their memory
            raise
        return f"the float64 reference cannot run: {type(e).__name__}: {str(e)[:120]}"
    out32 = _call(ref, clone_inputs(inputs), rng, "the reference")
    errors = []
    for o64, o32, oc in zip(_outputs(out64), _outputs(out32), cand_outs):
        if isinstance(o64, torch.Tensor) and o64.is_floating_point() and isinstance(oc, torch.Tensor):
            denom = float(o64.norm()) or 1.0
            errors.append((float((o32.double() - o64).norm()) / denom, float((oc.double() - o64).norm()) / denom))
    return errors


def precision_check(cand, mod, ref, rules, device, precision, res, ctx) -> None:
    """Every floating output's error to float64, on fresh inputs: far above the reference's own means the
    candidate computes in lower precision than the problem."""
    if precision not in FP64_CHECKED:
        return
    inputs = fresh_inputs(mod, device, ctx)
    rng = draw_seed()
    ref_out = _call(ref, clone_inputs(inputs), rng, "the reference")
    _, outs, why = run_candidate(cand, inputs, ref_out, rng, "float64 check")
    if why is not None:
        flag(res, "check_failed", f"fp64: {why}")
        return
    if not _fp64_feasible(inputs, outs, precision):  # too large: rows of the batch, where they stand apart
        cut = batch_rows(inputs, outs, ref_out)
        why = cut if isinstance(cut, str) else rows_apart(ref, cut[0], cut[2], rng, rules)
        if why is not None:
            res["flag_details"]["fp64_check"] = f"not run: the float64 copies would not fit, and {why}"
            return
        inputs, outs, _ = cut
        res["flag_details"]["fp64_rows"] = int(next(x.shape[0] for x in outs if isinstance(x, torch.Tensor)))
    errors = fp64_errors_or_flag(res, "fp64", ref, outs, inputs, rng, ctx["rebuild"])
    if errors is None:
        return
    if isinstance(errors, str):
        res["flag_details"]["fp64_check"] = errors
        return
    if isinstance(ctx.get("timed_fp64"), list):  # the same comparison on one of the timed calls (a secret one)
        errors = errors + ctx["timed_fp64"]
    res["flag_details"]["fp64_rel_err"] = [{"reference": er, "candidate": ec} for er, ec in errors]
    low_kernels = res["flag_details"].get("reduced_precision_kernels")
    for k, (e_ref, e_cand) in enumerate(errors):
        bound = _fp64_bound(e_ref, precision, rules)
        if e_cand > bound or (low_kernels and e_cand > 4 * e_ref + 1e-7):
            flag(res, "precision_downgrade", f"output {k}: error vs float64 {e_cand:.3g}, the reference's {e_ref:.3g} "
                  f"(bound {bound:.3g})" + (f"; reduced-precision kernels: {', '.join(low_kernels[:3])}" if low_kernels else ""))
            return


def _structural(buf: torch.Tensor) -> bool:
    """A buffer of 0s and 1s, both present: a mask (GPT's causal `bias`), which an honest kernel may build in (causal
    attention) rather than read; perturbing it would flag that kernel."""
    zeros = buf == 0
    return bool((zeros | (buf == 1)).all()) and bool(zeros.any()) and not bool(zeros.all())


def _state_kind(key: str, v, params: set, rules: dict) -> str:
    """How a state entry is perturbed: param, running_var, running (other running statistics), buffer (a float
    weight kept as a buffer), int (quantised weights), or keep (a constant of the problem, a mask, a counter)."""
    if not isinstance(v, torch.Tensor) or not v.numel() or v.dtype == torch.bool or "num_batches_tracked" in key:
        return "keep"
    if key in params:
        return "param" if v.is_floating_point() else ("keep" if v.is_complex() else "int")
    if "running_var" in key:
        return "running_var"
    if "running_" in key:
        return "running"
    if v.numel() <= rules["constant_buffer_numel"]:  # filter taps, colour matrices, scales: the problem's constants
        return "keep"
    if v.is_floating_point():
        return "keep" if _structural(v) else "buffer"
    return "int" if not v.is_complex() else "keep"


def _shuffled(v: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """The same values in other places, each row (last dimension) permuted on its own: a kernel built around the
    default's positions (a sparsity pattern, baked packed weights) fails; one built around the values it may meet (a
    dequantisation table) or a row's count of them (a fixed-width sparse format) does not."""
    rows = v.reshape(-1, v.shape[-1]) if v.dim() else v.reshape(1, 1)
    order = torch.rand(rows.shape, generator=gen).argsort(dim=-1).to(v.device)
    return rows.gather(-1, order).reshape(v.shape)


def perturbed_state(ref, state: dict, seed: int, rules: dict) -> dict | None:
    """The reference's state with every weight moved by a draw from `seed`: parameters shifted by a share of their
    mean magnitude, or scaled by e^x where they are all positive (scales stay positive); running variances scaled;
    float buffers shuffled, then scaled; integer (quantised) weights, parameters or buffers, shuffled. Small buffers
    are the problem's constants and stay, as do masks. A tensor tied under several keys moves once, the same under
    each. None when nothing moves."""
    params = {k for k, _ in ref.named_parameters(remove_duplicate=False)}
    gen = torch.Generator(device="cpu").manual_seed(seed)
    scale_by = rules["weights_perturbation"]
    out, moved, tied = {}, False, {}
    for k, v in state.items():
        kind = _state_kind(k, v, params, rules)
        if kind == "keep":
            out[k] = v.clone() if isinstance(v, torch.Tensor) else v
            continue
        moved = True
        same = (v.data_ptr(), v.dtype, tuple(v.shape), tuple(v.stride()))
        if same in tied:  # load_state_dict writes every key into the one tensor: the last one would win
            out[k] = tied[same]
            continue
        if kind == "int":
            out[k] = _shuffled(v, gen)
        else:
            if kind == "buffer":
                v = _shuffled(v, gen)
            noise = torch.randn(v.shape, generator=gen).to(v.device, torch.float32)
            if kind in ("running_var", "buffer") or (kind == "param" and bool((v > 0).all())):
                out[k] = (v.float() * torch.exp(scale_by * noise)).to(v.dtype)
            else:
                scale = float(v.float().abs().mean()) or 1.0
                out[k] = (v.float() + scale_by * scale * noise).to(v.dtype)
        tied[same] = out[k]
    return out if moved else None


def secret_weights(cand, mod, ref, rules, device, atol, rtol, res, ctx) -> bool:
    """After the published seeds, the reference and the candidate both take secretly perturbed weights, loaded as
    grading loads weights, and keep them for the timed calls and every check: a submission specialised to the
    reference's default init earns the published seeds' correctness and nothing more. False (flagged
    ignores_weights) when its output does not follow them; the seed is kept in the record. In every suite: v0.1
    builds the candidate from the init seed (its published semantics) and loaded nothing before timing, so a model
    that followed weights only once loaded ran its timed calls on the default init."""
    seed = draw_seed()
    perturbed = perturbed_state(ref, ref.state_dict(), seed, rules)
    if perturbed is None:
        return True
    res["flag_details"]["secret_weights_seed"] = seed
    ref.load_state_dict(perturbed)  # in place: the paired (and compiled) reference wraps this module
    cand.request({"cmd": "load_weights", "weights": weight_slots(cand, perturbed, "g")}, "secret weights")
    inputs = fresh_inputs(mod, device, ctx)
    rng = draw_seed()
    ref_out = _call(ref, clone_inputs(inputs), rng, "the reference")
    _, outs, why = run_candidate(cand, inputs, ref_out, rng, "secret weights")
    passed, why, _, _ = judged(ref_out, outs, why, rules, atol, rtol)
    if not passed:
        flag(res, "ignores_weights", f"right with the reference's weights on the published seeds, wrong with secretly "
                                     f"perturbed weights loaded after them: {why}")
    return passed


def weights_check(cand, mod, ref, state, rules, device, atol, rtol, res, ctx) -> None:
    """Perturb the reference's weights again (a secret draw), load them into the candidate as grading loads weights
    (by key, whatever its own names are), and require its output to follow the perturbed reference's."""
    perturbed = perturbed_state(ref, state, draw_seed(), rules)
    if perturbed is None:
        return
    ref_p = reference_copy(ref, ctx["rebuild"], perturbed)
    cand.request({"cmd": "load_weights", "weights": weight_slots(cand, perturbed, "p")}, "weights check")
    inputs = fresh_inputs(mod, device, ctx)
    rng = draw_seed()
    ref_out = _call(ref_p, clone_inputs(inputs), rng, "the reference")
    unperturbed = _call(ref, clone_inputs(inputs), rng, "the reference")
    if compare(unperturbed, ref_out, rules, atol, rtol)[0]:
        res["flag_details"]["weights_check"] = "the perturbation does not change the reference's output here"
        return
    _, outs, why = run_candidate(cand, inputs, ref_out, rng, "weights check")
    passed, why, _, _ = judged(ref_out, outs, why, rules, atol, rtol)
    if not passed:
        flag(res, "ignores_weights", f"with perturbed weights loaded: {why}")
