"""The timed loop: the candidate's calls, timed in its process, and the reference's, timed here, trial for trial.

Each batch of calls gets fresh secret inputs, written into the candidate's slots; the candidate's claimed times are
bounded by the judge's clock (the round trip of each batch, less the calibrated overhead); some calls, at secret
positions, are checks the candidate cannot tell from the rest (a float64 comparison, off-distribution inputs, a
bitwise repeat on inputs one value apart). Everything here runs in the judge's process.
"""
from __future__ import annotations

import secrets
import statistics

import torch

from kb_data.harness import confine, timing
from kb_data.harness.cgroup import FREEZE_WAIT_S
from kb_data.harness.checks import fp64_errors_or_flag, reached, repeat_differs, twin_inputs
from kb_data.harness.reference import (FP64_CHECKED, _call, _fp64_feasible, _outputs, _to_device, batch_rows,
                                       clone_inputs, rows_apart)
from kb_data.harness.round_trip import (batch_msg, gpu_phases, host_interrupts, median_phases, round_trip, sandbox_clocks,
                                       take_replies)
from kb_data.harness.session import (QUEUE_WAIT_S, cpu_threads, draw_seed, flag, fresh_inputs, heavy_values, judged,
                                     off_distribution)

MAX_PAIRED_TRIALS = 256  # the cap for kernels too short to fill MIN_PAIRED_MS: 16 batches of 16 calls a side
MAX_TIMED_FP64 = 4  # timed calls whose outputs are kept for the float64 comparison after the loop, at most ...
TIMED_FP64_BYTES = 2 << 30  # ... and while what they keep stays under this (the first is always kept)
REPEAT_KINDS = ("repeat", "repeat_twin")  # a timed call, and a later one on its inputs with one value redrawn
KEPT_ON_GPU_BYTES = 1 << 30  # a timed call's tensors kept past its batch (the pair's) over this wait on the host
OFF_KINDS = ("off", "off_scattered")  # timed calls on off-distribution inputs: wholly, and scattered through the suite's
PROBE_KINDS = OFF_KINDS + ("heavy",)  # timed calls that are not timed: those, and a reduction's few dominant values
EXTRA_CHECK_ODDS = 64  # past the rule's trials, each timed call is also a check with this chance in one
MAX_BATCH = 16  # timed calls per round trip to the candidate
BATCH_BYTES = 1 << 30  # the slots of one batch's inputs and outputs


def batch_size(inputs: list, out_meta: list, device, max_batch: int = MAX_BATCH) -> int:
    """Timed calls per round trip to the candidate: as many as BATCH_BYTES of input and output slots hold (host
    memory on a CPU, where the judge also keeps each call's inputs and outputs), at most MAX_BATCH."""
    per_call = sum(x.numel() * x.element_size() for x in list(inputs) + list(out_meta) if isinstance(x, torch.Tensor))
    budget = BATCH_BYTES if device.type == "cuda" else BATCH_BYTES // 4
    return max(1, min(max_batch, budget // max(per_call, 1)))


def time_paired(cand, mod, ref, paired_ref, rules, device, atol, rtol, res, ctx, job) -> None:
    timer = timing.Timer(device, l2_flush=rules["l2_flush"], flush_bytes=job.get("l2_flush_bytes"))
    warmup, trials = job.get("warmup", rules["warmup"]), job.get("trials", rules["trials"])
    min_ms = job.get("min_timed_ms", timing.MIN_PAIRED_MS if paired_ref is not None else timing.MIN_TIMED_MS)
    claims, ref_times, cand_flush, ref_flush, bounds = [], [], [], [], []
    first_calls = {"candidate": [], "reference": []}  # evidence for the noise benchmark: a batch's first call / its median
    cand_batches, ref_batches = [], []  # per batch, the mean of its counted calls: the unit of the times recorded
    stale, i, batches, fp64_due = None, 0, 0, []
    ref_interrupts = []  # the host's interrupt count before and after each batch of the reference, and its seconds
    phases = []  # on a GPU, where each candidate batch's round trip went by its own account (evidence only)
    # checks ride in the timed loop at secret positions, as timed calls like any other: the candidate's process
    # cannot tell them from the rest (a float64 comparison; on a degenerate problem, off-distribution inputs, whole
    # and scattered through the suite's)
    kinds = (["fp64"] * min(MAX_TIMED_FP64, max(1, trials // 8))
             + (list(OFF_KINDS) if ctx.get("degenerate") else []) + (["heavy"] * 2 if ctx.get("heavy") else []))
    extra_kinds = list(kinds)
    if rules["require_bitwise_repeat"] and trials >= len(kinds) + 2:  # a timed call and its twin, in that order
        kinds += list(REPEAT_KINDS)
    positions = secrets.SystemRandom().sample(range(warmup, warmup + trials), min(len(kinds), max(trials, 0)))
    checks_at = dict(zip(positions, kinds))  # distinct positions: each check gets its own call
    pair = sorted(p for p, kind in checks_at.items() if kind in REPEAT_KINDS)
    checks_at.update(zip(pair, REPEAT_KINDS))
    repeat = {}  # the pair's inputs, then (outputs, reference's outputs) of each
    ref_head_ms = QUEUE_WAIT_S * 1e3  # the reference's head start (Timer.timed_batch): its last batch's queueing time
    model = paired_ref if paired_ref is not None else ref
    work = {}  # the reference's inputs live in the same buffers every call, as the candidate's do
    # past the rule's trials a GPU loop goes on until both sides' timed GPU time reaches min_ms (the evidence the
    # in-process loop before the boundary gathered in that much wall time), and no further than MAX_PAIRED_TRIALS
    max_trials = job.get("max_trials", MAX_PAIRED_TRIALS)
    while i < warmup + trials or (device.type == "cuda" and sum(claims) + sum(ref_times) < min_ms
                                  and i < max_trials):
        # the warm-up calls are batches of their own (a batch's calls count together or not at all); a CPU loop stops
        # at the rule's count; a GPU loop's batches may overshoot it, which only adds evidence
        if i < warmup:
            k = min(ctx["batch"], warmup - i)
        else:
            k = ctx["batch"] if device.type == "cuda" else min(ctx["batch"], warmup + trials - i)
        calls = []
        for c in range(k):
            kind = checks_at.get(i + c)
            if kind is None and i + c >= warmup + trials and secrets.randbelow(EXTRA_CHECK_ODDS) == 0:
                kind = extra_kinds[secrets.randbelow(len(extra_kinds))]  # a loop that runs on keeps being checked
            inputs, rng = fresh_inputs(mod, device, ctx), draw_seed()
            if kind in OFF_KINDS:
                inputs = off_distribution(inputs, device, scattered=kind == "off_scattered")
            elif kind == "heavy":
                inputs = heavy_values(inputs, device, ctx["heavy"], draw_seed())
            elif kind == "repeat":
                repeat["original"], repeat["rng"] = _kept(inputs, device), rng
            elif kind == "repeat_twin" and "original" in repeat:  # its own rng: a shared one would name the pair
                inputs, repeat["where"] = twin_inputs(_on(repeat["original"], device), inputs)
            calls.append({"i": i + c, "kind": kind, "inputs": inputs, "rng": rng})
        msg, fill = batch_msg(cand, ctx, [t["inputs"] for t in calls], [t["rng"] for t in calls], device)
        for side in (("cand", "ref") if batches % 2 == 0 else ("ref", "cand")):
            if side == "ref":
                with cand.paused():
                    before, t0 = host_interrupts() if device.type == "cpu" else None, timing._perf_counter()
                    timed = timer.timed_batch([_reference_call(t, model, work, k) for t in calls],
                                              head_start_ms=ref_head_ms)
                    if device.type == "cpu":
                        ref_interrupts.append((before, host_interrupts(), timing._perf_counter() - t0))
                if timer.queued_ms is not None:  # as long as the candidate's gate holds
                    ref_head_ms = min(timer.queued_ms, QUEUE_WAIT_S * 1e3)
                for t, (ms, flush_ms) in zip(calls, timed):
                    t["ref_ms"], t["ref_flush"] = ms, flush_ms
                del timed
            else:
                reply, wall, cpu_ms, held, thread_ms = round_trip(
                    cand, msg, "timing", fill, received=lambda reply: take_replies(cand, ctx, calls, reply))
                ms = [t["ms"] for t in calls]
                bound = _batch_bound(wall, k, statistics.fmean(ms), any(t["i"] >= warmup for t in calls), ctx, rules,
                                     device, held, cpu_ms, thread_ms, typical_ms=_typical_claim(ms, device))
                bounds.append(bound)
                if (ph := gpu_phases(reply, [t["reply"] for t in calls], wall)) is not None:  # take_replies read them
                    phases.append(ph)
        counted = [t for t in calls if t["i"] >= warmup and t["kind"] not in PROBE_KINDS]
        if counted:  # the candidate holds a batch's inputs before its first call and may move work between its calls
            # a claim under what the judge's clock allows is not believed: the batch is timed at the judge's own
            # figure (timed at the floor, the slack and margin let one forged batch of a CPU grading pass as 2x faster)
            ms = [t["ms"] for t in counted]
            claimed = statistics.fmean(ms)
            bound["floored"] = _typical_claim(ms, device) < bound["floor_ms"]
            cand_batches.append(max(bound["trusted_ms"] if bound["floored"] else claimed, bound.get("share_ms", 0.0)))
            ref_batches.append(statistics.fmean(t["ref_ms"] for t in counted))
            if len(counted) > 2 and counted[0] is calls[0]:  # how far a batch's first call stands from its median
                for side, key in (("candidate", "ms"), ("reference", "ref_ms")):
                    mid = statistics.median(t[key] for t in counted)
                    if mid > 0:
                        first_calls[side].append(counted[0][key] / mid)
        for t in calls:
            kind, inputs, ref_out, outs = t["kind"], t["inputs"], t["ref_out"], t["outs"]
            if t["i"] >= warmup and kind not in PROBE_KINDS:
                claims.append(t["ms"])
                ref_times.append(t["ref_ms"])
                if t["flush"] is not None:
                    cand_flush.append(t["flush"])
                if t["ref_flush"] is not None:
                    ref_flush.append(t["ref_flush"])
            ok, why = judged_call(t, ref, model, rules, atol, rtol)
            if kind in PROBE_KINDS:  # judged only where the reference's outputs are finite
                finite = all(torch.isfinite(o.float()).all() for o in _outputs(ref_out) if isinstance(o, torch.Tensor))
                if kind == "heavy":
                    if finite and not ok:
                        ctx.setdefault("timed_heavy", f"timed call {t['i']}: {why}")
                elif finite and (ctx.get("timed_off") is None or ctx["timed_off"][0]):  # a failing one's tensors are kept
                    ctx["timed_off"] = (ok, why, outs, inputs, t["rng"]) if not ok else (ok, why, None, None, None)
            elif not ok and stale is None:
                stale = f"timed call {t['i']}: {why}"
            elif kind == "fp64" and ok and _fp64_feasible(inputs, outs, ctx["precision"]) and (
                    not fp64_due or len(fp64_due) < MAX_TIMED_FP64 and _nbytes(fp64_due) < TIMED_FP64_BYTES):
                fp64_due.append((outs, inputs, t["rng"]))
            elif kind == "fp64" and ok and ctx["precision"] in FP64_CHECKED and not fp64_due:
                cut = batch_rows(inputs, outs, ref_out)  # too large: rows of it, copied now, checked after the loop
                if not isinstance(cut, str):
                    fp64_due.append((cut[1], cut[0], t["rng"], cut[2]))
            elif kind in REPEAT_KINDS and ok:
                if device.type == "cuda" or _nbytes([repeat.get(k) for k in REPEAT_KINDS]) < TIMED_FP64_BYTES:
                    repeat[kind] = (_kept(outs, device), _kept(_outputs(ref_out), device))  # a GPU's: host if large
                else:
                    res["flag_details"]["timed_repeat"] = ("not run: the pair's outputs would not fit beside the "
                                                           "timed calls'")
        # what this batch made is freed before the next one's inputs are drawn (`counted` and `fill` held the last
        # batch's calls: three of a 7.5 GB problem's tensors, which ran the judge out of an 80 GB card)
        t = inputs = ref_out = outs = calls = counted = msg = fill = None
        i, batches = i + k, batches + 1
    for outs, inputs, rng, *ref_rows in fp64_due:  # after the loop: a longer pause after a batch would say where one fell
        if ref_rows and rows_apart(ref, inputs, ref_rows[0], rng, rules) is not None:
            continue
        errors = fp64_errors_or_flag(res, "timed fp64", ref, outs, inputs, rng, ctx["rebuild"])
        if errors is None:
            break
        if isinstance(errors, list):
            ctx.setdefault("timed_fp64", []).extend(errors)
    del fp64_due
    if "repeat" in repeat and "repeat_twin" in repeat and repeat.get("where") is not None:
        reach = reached(ref, _on(repeat["original"], device), repeat["where"], repeat["rng"], ctx["rebuild"])
        why = repeat_differs(repeat["repeat"], repeat["repeat_twin"], reach) if isinstance(reach, list) else None
        if isinstance(reach, str):
            res["flag_details"]["timed_repeat"] = f"not run: what the redrawn place reaches cannot be told ({reach})"
        elif all(m is None or bool(m.all()) for m in reach):  # nothing left to compare: said, not passed in silence
            res["flag_details"]["timed_repeat"] = "not run: the redrawn place reaches every output value"
        elif why:
            flag(res, "nondeterministic", f"two timed calls on inputs one value apart: {why}")
    repeat = None
    if stale:
        flag(res, "stale_output", f"an output did not match its call's fresh inputs ({stale})")
    cand_t = timing.Timing(cand_batches, device.type, cand_flush)
    ref_t = timing.Timing(capped_reference_batches(ref_batches, res, rules, device), device.type, ref_flush)
    # claimed_ms: the claims before any batch was timed at the judge's figure (the roofline judges those)
    res.update(sol_ms=cand_t.median_ms, sol_p10_ms=cand_t.p10_ms, sol_p90_ms=cand_t.p90_ms, n_trials=len(claims),
               claimed_ms=statistics.median(claims) if claims else None)
    _bound_claims(res, bounds, ctx, rules)
    if cand.flush_foreign is not None:
        flag(res, *cand.flush_foreign)
    if cand.outputs_watched[0]:
        res["flag_details"]["outputs_watched"] = {"batches": cand.outputs_watched[0], "read": cand.outputs_watched[1]}
    if cand.thread_clock_lost is not None:  # the timing threads' floor could not be read: not a pass
        flag(res, "check_failed", f"timing: {cand.thread_clock_lost}")
    if "timing_bound" in res["flag_details"]:
        res["flag_details"]["timing_bound"].update(
            calls_per_round_trip=ctx["batch"],
            gate=ctx.get("gate") or ("the GPU stream's" if device.type == "cuda" else "the candidate's go"))
        if phases:  # the no-work calibration's and the timed batches' (medians, ms a call), side by side
            res["flag_details"]["timing_bound"]["phases_ms"] = {"calibration": ctx.get("calibration_phases"),
                                                                "timed": median_phases(phases)}
    _flush_check(cand_t, ctx.get("calibration_flush_ms"), ref_t if paired_ref is not None else None, res, rules)
    if paired_ref is not None:
        res["ref_paired_ms"] = ref_t.median_ms
        res["paired_speedup"] = timing.paired_ratio(cand_t, ref_t)
        # the estimators the record does not use, kept as evidence of how far they are apart
        claimed = statistics.median(claims) if claims else 0.0
        res["flag_details"]["paired_estimators"] = {
            "batch_means": res["paired_speedup"],
            "per_call": timing.paired_ratio(timing.Timing(claims, device.type), timing.Timing(ref_times, device.type)),
            "per_call_medians": statistics.median(ref_times) / claimed if claimed > 0 else None,
            "first_call_over_median": {k: statistics.median(v) for k, v in first_calls.items() if v},
            "batch_ratio_p10_p90": _spread([r / c for c, r in zip(cand_batches, ref_batches) if c > 0])}
        if device.type == "cpu":
            _interrupt_check(res, ctx, ref_interrupts, rules)
        if cand.freezes_ms:
            res["flag_details"]["sandbox_freezes"] = {
                "count": len(cand.freezes_ms), "median_ms": statistics.median(cand.freezes_ms),
                "slowest_ms": max(cand.freezes_ms), "incomplete": cand.unfrozen_pauses}
        if cand.sb.cgroup is not None and cand.unfrozen_pauses:  # on either device (BENCHMARKS: honest freezes' times)
            flag(res, "check_failed", f"the sandbox's cgroup did not freeze within {FREEZE_WAIT_S:g} s in "
                 f"{cand.unfrozen_pauses} pause(s): its processes ran beside the reference's timed calls (a process "
                 "held in one long system call outwaits the freeze: tests/corpus/open/rt18_unfreezable_kernel_work_gelu)")
        if cand.unstopped_trees:  # its first process, slowed (the idle class: red team, session 47), or the host's
            flag(res, "check_failed", f"the sandbox's first process did not report its tree stopped within "
                 f"{confine.TREE_ACK_WAIT_S:g} s in {cand.unstopped_trees} pause(s): what the judge's pids missed ran beside "
                 "the reference's timed calls")
        if cand.sb.ran_stopped:  # continued from the kernel's side (a timer's SIGCONT): it ran beside the reference
            flag(res, "reference_tampered", f"the sandbox's tree ran while its first process had it stopped for the "
                 f"judge (more than {confine.STOPPED_CPU_MAX_NS / 1e6:g} ms of CPU between the stop and the continue) "
                 f"in {cand.sb.ran_stopped} pause(s): a signal the kernel sends on its behalf continued it")
        if cand.frozen_cpu[0]:  # what the sandbox ran while frozen ran beside the reference's timed calls
            flag(res, "reference_tampered", f"the sandbox ran {cand.frozen_cpu[1]:.3g} ms of CPU while it was frozen "
                 f"for the reference's timed calls (in {cand.frozen_cpu[0]} of them): a process of it that a fatal "
                 "signal ends leaves the freeze, and its exit runs beside the reference")
        limit = rules["reference_slowdown_limit"]
        margin = rules["reference_slowdown_min_ms" if device.type == "cuda" else "reference_slowdown_min_ms_cpu"]
        if ref_t.p10_ms > limit * res["ref_alone_ms"] and ref_t.p10_ms - res["ref_alone_ms"] > margin:
            why = (f"beside the submission the reference's p10 was {ref_t.p10_ms:.4g} ms, alone before it was loaded "
                   f"its median was {res['ref_alone_ms']:.4g} ms (limit {limit}x)")
            if device.type == "cpu" and cand.sb.cgroup is not None and cand.unfrozen_pauses == 0 \
                    and not cand.frozen_cpu[0]:
                # every process of the sandbox was frozen while the reference ran, and on a CPU nothing of its work
                # outlives a freeze (a GPU's queued kernels do): the slowdown is the host's, not the submission's
                res["flag_details"]["reference_slowdown"] = why + "; the sandbox was frozen throughout: the host's load"
            else:
                flag(res, "reference_tampered", why)


def _interrupt_check(res: dict, ctx: dict, batches: list, rules) -> None:
    """Each CPU's timer interrupts (round_trip.interrupt_counts) while the reference was timed, against that CPU's
    rate in the calibration (the sandbox's no-work calls, before the submission loaded). An interrupt's work is
    charged to whatever runs on its CPU, the judge timing its reference included, and timers the sandbox armed fire
    while it is frozen, waking nothing of it (its CPU account stays still): tens of thousands a second on each CPU
    slowed a CPU reference 3-10x (red team, session 35: timerfds in six processes, every batch). A CPU past
    `interrupt_storm_per_s` over its rate and `interrupt_storm_min` interrupts in one batch is a storm, per CPU, so
    that a large host's other CPUs (their timers, their jobs) do not add up to one. It was reference_tampered; since
    session 39 a CPU grading's sandbox can arm no timer (seccomp.TIMER_SYSCALLS), and the count is host-wide: a
    neighbour's storm made an honest grading beside it fail here (red team, session 39). A storm is recorded, not
    flagged; the batch it slowed counts at most `reference_batch_slack` x the quickest in the speedup
    (capped_reference_batches)."""
    base = ctx.get("interrupts_per_s")
    if base is None or not batches or any(b is None or a is None or len(b) != len(base) or len(a) != len(base)
                                          for b, a, _ in batches):
        res["flag_details"]["reference_interrupts"] = "not read: /proc/interrupts is unreadable or names no timer"
        return
    count, seconds = max((((a - b) - rate * s, s) for before, after, s in batches if s > 0
                          for b, a, rate in zip(before, after, base)), key=lambda e: e[0] / e[1])
    res["flag_details"]["reference_interrupts"] = {"calibration_per_s_busiest_cpu": round(max(base)),
                                                   "worst_cpu_batch_over_it_per_s": round(count / seconds)}
    if count / seconds > rules["interrupt_storm_per_s"] and count > rules["interrupt_storm_min"]:
        res["flag_details"]["reference_interrupts"]["storm"] = (
            f"a CPU served {count:.0f} timer interrupts more than its calibration's rate in {seconds * 1e3:.3g} ms of "
            "the reference's timed calls, with the sandbox frozen and unable to arm a timer: the host's")


def capped_reference_batches(ref_batches: list, res: dict, rules, device) -> list:
    """The reference's batch times as the speedup counts them: each at most `reference_batch_slack` x the quickest
    batch and a margin. Kernel work that outlives the sandbox's freeze (timers armed to fire beside the judge) can slow
    the reference in the batches it picks, and a grading of few batches takes the median of few ratios, which one
    such batch moves; the host's load also varies from batch to batch, and costs only speedup here. How many batches
    were cut, and the worst one against the quickest, go into the record."""
    if len(ref_batches) < 2:
        return ref_batches
    quickest = min(ref_batches)
    margin = rules["reference_slowdown_min_ms" if device.type == "cuda" else "reference_batch_margin_ms_cpu"]
    cap = rules["reference_batch_slack"] * quickest + margin
    over = [ms for ms in ref_batches if ms > cap]
    if over:
        res["flag_details"]["reference_batches_capped"] = {"batches": len(over), "of": len(ref_batches),
                                                           "worst_over_quickest": round(max(over) / quickest, 3)}
    return [min(ms, cap) for ms in ref_batches]


def judged_call(t: dict, ref, paired, rules, atol, rtol) -> tuple[bool, str | None]:
    """A timed call's outputs against the paired reference's; where a compiled paired reference disagrees, the eager
    reference on the call's inputs decides: the compiled one may itself stand up to the tolerance away from it (an
    FP8 quantisation compiled rounds otherwise)."""
    ok, why, _, _ = judged(t["ref_out"], t["outs"], t["why"], rules, atol, rtol)
    if not ok and paired is not ref and t["why"] is None:
        try:
            eager = _call(ref, clone_inputs(t["inputs"]), t["rng"], "the reference")
        except Exception:  # no second opinion (out of memory, say): the first verdict stands
            return ok, why
        ok, why, _, _ = judged(eager, t["outs"], None, rules, atol, rtol)
    return ok, why


def _kept(tensors: list, device) -> list:
    """Tensors kept past their batch: on the host where they would crowd the GPU (a 7.5 GB problem's pair of
    outputs, with the reference's, ran the judge out of an H100's memory)."""
    if device.type != "cuda" or _nbytes(tensors) <= KEPT_ON_GPU_BYTES:
        return tensors
    return _on(tensors, torch.device("cpu"))


def _on(tensors: list, device) -> list:
    return [_to_device(x, device) for x in tensors]


def _nbytes(kept: list) -> int:
    """Bytes of the tensors in `kept` (nested tuples and lists)."""
    if isinstance(kept, torch.Tensor):
        return kept.numel() * kept.element_size()
    return sum(_nbytes(x) for x in kept) if isinstance(kept, (list, tuple)) else 0


def _quantiles(xs: list) -> list | None:
    """The 10th, 50th and 90th percentiles of `xs` (None for none)."""
    if not xs:
        return None
    t = timing.Timing(xs, "")
    return [t.p10_ms, t.median_ms, t.p90_ms]


def _spread(xs: list) -> list | None:
    """The 10th and 90th percentiles of `xs` (None for fewer than two)."""
    q = _quantiles(xs) if len(xs) >= 2 else None
    return [q[0], q[2]] if q else None


def _reference_call(t: dict, model, work: dict, k: int) -> tuple:
    """A timed reference call for Timer.timed_batch: its inputs copied into the same buffers every call (as the
    candidate's are), its outputs kept in t["ref_out"]."""
    def prepare():
        x = t["inputs"]
        if "inputs" not in work or any(isinstance(w, torch.Tensor) and w.shape != v.shape
                                       for w, v in zip(work["inputs"], x)):
            work["inputs"] = clone_inputs(x)
        else:
            for w, v in zip(work["inputs"], x):
                if isinstance(w, torch.Tensor):
                    w.copy_(v)
        timing.manual_seed(t["rng"])

    def keep(out):  # a compiled reference's CUDA graph rewrites its outputs in the batch's next call
        t["ref_out"] = _own(out) if k > 1 else out

    return prepare, lambda: _no_grad(model, work["inputs"]), keep


def _own(out):
    """The outputs as tensors of their own (the same structure)."""
    return type(out)(clone_inputs(out)) if isinstance(out, (tuple, list)) else clone_inputs([out])[0]


def _no_grad(model, inputs):
    with torch.no_grad():
        return model(*inputs)


def _typical_claim(ms: list[float], device) -> float:
    """A batch's claims as its floor holds them: their mean, or on a CPU their median where a loaded host's
    preemption of one call lifted the mean (a short forward whose work moved out of the timed calls hid in that lift:
    CI, session 44). The batch is still timed at its mean or at the judge's figure."""
    mean = statistics.fmean(ms)
    return min(mean, statistics.median(ms)) if device.type == "cpu" else mean


def _batch_bound(wall_ms: float, calls: int, claimed_ms: float, counted: bool, ctx: dict, rules, device,
                 held: bool, cpu_ms: float | None = None, thread_ms: dict | None = None,
                 typical_ms: float | None = None) -> dict:
    """One batch of timed calls against the judge's clock: its round trip per call less what a call costs with no
    work (calibrated before the submission loaded) is the trusted figure; a mean claim under `floor_ms` is more
    than the slack x and the margin under it. On a GPU with the gate, the clock ran from the gate's opening: a batch
    held there until the host had queued it all took the GPU's time and nothing of the host's, and is held to the
    gated slack and margins (a batch that was not: the host's per-call cost, `overhead_host_ms`, comes
    off too). Without the gate (a CPU, whose timed calls pay a cache flush of milliseconds; a driver without stream
    memory operations) the slack and the margin per call are wide. On a CPU with the sandbox's own CPU account
    (`cpu_ms` over the batch), that account less a no-work call's bounds the trusted figure too: the lower of the
    two stands, so that a host's load, which stretches the round trip, does not call an honest claim forged. And with
    the CPU clocks of the candidate's timing threads (`thread_ms`), the forward thread's less a no-work batch of as
    many calls (`_thread_overhead`) is a floor of its own, on a narrow margin: a call's wall time is never under its
    thread's CPU time, so an honest claim stands over it however loaded the host is, and work done there but left out
    of the claims (a slowed or rewritten clock) shows however short the call. The aside thread (the harness's copies
    and frees, run while the forward thread waits) does none of the call's work: what it spends past
    x`timing_bound_slack_aside` its no-work figure (the frees of fresh outputs, which a no-work call does not make,
    scale with the copies) is work moved out of the timed interval onto it: added to the floor in full. The rest of
    the sandbox's CPU account past its no-work figure and `timing_bound_margin_ms_rest` (threads of the submission's
    own) is work it may do within its share of the cores; past what the share's other cores hold over the round trip,
    it ran on more cores than the share (on a share of one core: outside the forward, say while it flushed), and the
    batch counts what its work takes on the share (`share_ms`, the least time a batch gets), as `cpu_share_*` does."""
    gated = ctx.get("overhead_host_ms") is not None  # calibrated only behind a GPU gate that works
    if gated:
        overhead = ctx["overhead_ms"] if held else ctx["overhead_host_ms"]
        slack = rules["timing_bound_slack_gated"]
        margin = rules["timing_bound_margin_ms_gated"] + rules["timing_bound_margin_ms_gated_batch"] / calls
    else:
        overhead, slack = ctx["overhead_ms"], rules["timing_bound_slack"]
        margin = rules["timing_bound_margin_ms" if device.type == "cuda" else "timing_bound_margin_ms_cpu"]
    trusted, trusted_cpu = wall_ms / calls - overhead, None
    if cpu_ms is not None and ctx.get("overhead_cpu_ms") is not None:
        trusted_cpu = cpu_ms / calls - ctx["overhead_cpu_ms"]
        trusted = min(trusted, trusted_cpu)  # a loaded host stretches the round trip, not the sandbox's CPU time
    typical = claimed_ms if typical_ms is None else typical_ms  # held to the floor (_typical_claim)
    bound = {"wall_ms": wall_ms, "calls": calls, "claimed_ms": claimed_ms, "typical_claim_ms": typical,
             "counted": counted, "trusted_ms": trusted,
             "floor_ms": (trusted - margin) / slack, "slack": slack, "margin_ms": margin,
             "held": held if gated else None}
    if thread_ms is not None and ctx.get("overhead_threads") is not None:
        per_batch, per_call = ctx["overhead_threads"]["forward"]
        trusted_forward = (thread_ms["forward"] - per_batch) / calls - per_call
        per_batch, per_call = ctx["overhead_threads"]["aside"]
        aside_over = thread_ms["aside"] / calls - (per_batch / calls + per_call) * rules["timing_bound_slack_aside"]
        bound.update(trusted_forward_ms=trusted_forward, aside_over_allowed_ms=aside_over)
        aside_over = max(0.0, aside_over)  # serial with the call and past its own allowance: counted in full
        floor = max(0.0, (trusted_forward - rules["timing_bound_margin_ms_forward"])
                    / rules["timing_bound_slack_forward"]) + aside_over
        if floor > bound["floor_ms"]:
            bound.update(floor_ms=floor, trusted_ms=max(trusted, trusted_forward + aside_over), floor_by="threads")
        clocks, fitted = sandbox_clocks(cpu_ms, thread_ms), ctx["overhead_threads"]
        if "rest" in clocks and "rest" in fitted:
            per_batch, per_call = fitted["rest"]
            rest_over = (clocks["rest"] - per_batch) / calls - per_call - rules["timing_bound_margin_ms_rest"]
            bound["rest_over_allowed_ms"] = rest_over
            # as many more cores as the sandbox's share holds may work all through the round trip (a thread pool's
            # workers spin between calls)
            outside = rest_over - (cpu_threads() - 1) * wall_ms / calls
            if outside > 0:
                bound["share_ms"] = max(claimed_ms, trusted_forward) + aside_over + outside  # as if run after it
    if trusted_cpu is not None:
        bound["trusted_cpu_ms"] = trusted_cpu
        # more CPU than its cores could give in the batch's time: it ran on more than its share (the paired reference
        # runs on that share), so the batch counts what its work takes there
        share = cpu_threads()
        if cpu_ms > rules["cpu_share_slack"] * share * wall_ms + rules["cpu_share_margin_ms"]:
            bound["share_ms"] = max(bound.get("share_ms", 0.0), trusted_cpu / share)
    return bound


def _bound_claims(res, bounds, ctx, rules) -> None:
    """The candidate's reported times against the judge's clock (_batch_bound). Every batch is held to it:
    a claim far under it was made up, or the work ran outside the timed interval, and the batch was timed at the
    judge's own figure (time_paired); a claim over the round trip itself is impossible. A host that stalls the judge (a
    loaded CI machine) only adds to some round trips, so an honest submission exceeds the bound in few batches:
    timer_tampered needs more than the rule's share of the counted batches and more than one (a CPU grading of a few
    trials has a single counted batch, which one stall of a loaded host put over the bound), or one impossible
    claim."""
    counted = [b for b in bounds if b["counted"]]
    if not counted:
        flag(res, "check_failed", "timing: no timed call came back to bound")
        return
    share = rules["timing_bound_batch_share"]
    over = [b for b in counted if b["typical_claim_ms"] < b["floor_ms"]]
    impossible = [b for b in bounds
                  if b["claimed_ms"] * b["calls"] > b["wall_ms"] * rules["overclaim_factor"] + rules["overclaim_ms"]]
    worst = max(counted, key=lambda b: b["floor_ms"] - b["typical_claim_ms"])
    res["flag_details"]["timing_bound"] = {
        "claimed_ms": worst["claimed_ms"], "typical_claim_ms": worst["typical_claim_ms"], "trusted_ms": worst["trusted_ms"],
        "trusted_cpu_ms": worst.get("trusted_cpu_ms"),
        "trusted_forward_ms": worst.get("trusted_forward_ms"), "aside_over_allowed_ms": worst.get("aside_over_allowed_ms"),
        "rest_over_allowed_ms": worst.get("rest_over_allowed_ms"),
        "overhead_ms": ctx["overhead_ms"], "overhead_host_ms": ctx.get("overhead_host_ms"), "slack": worst["slack"],
        "margin_ms": worst["margin_ms"], "batches": len(counted), "over_bound": len(over),
        "floored": sum(bool(b.get("floored")) for b in counted), "over_round_trip": len(impossible),
        "held": sum(b["held"] is True for b in counted),
        "over_cpu_share": sum("share_ms" in b for b in counted),
        # how far the judge's clock stands from the claims over all batches, not only the worst (per call)
        "trusted_less_claimed_ms_p10_p50_p90": _quantiles([b["trusted_ms"] - b["claimed_ms"] for b in counted]),
        "trusted_over_claimed_p10_p50_p90": _quantiles([b["trusted_ms"] / b["claimed_ms"] for b in counted
                                                         if b["claimed_ms"] > 0])}
    if impossible:
        b = impossible[0]
        flag(res, "timer_tampered", f"the candidate claimed {b['claimed_ms'] * b['calls']:.4g} ms for a batch of "
              f"{b['calls']} timed calls whose whole round trip took {b['wall_ms']:.4g} ms")
    elif len(over) > max(1, share * len(counted)):  # one stall alone is forgiven (timed at the judge's figure)
        # which floor held the worst batch: the round trip's (x slack + margin) or the timing threads' clocks
        by = ("the timing threads' clocks" if worst.get("floor_by") == "threads"
              else f"the round trip at x{worst['slack']:g} + {worst['margin_ms']:.3g} ms")
        flag(res, "timer_tampered", f"the candidate's claims are under the judge's floor in {len(over)} of "
              f"{len(counted)} batches of timed calls (allowed: {share:.0%}); the worst: {worst['typical_claim_ms']:.4g} "
              f"ms a call claimed under a floor of {worst['floor_ms']:.4g} ms set by {by} (the judge's figure "
              f"{worst['trusted_ms']:.4g} ms, the forward thread's {worst.get('trusted_forward_ms') or 0:.4g} ms, the "
              f"copies' thread over its allowance {worst.get('aside_over_allowed_ms') or 0:.4g} ms)")


def _flush_check(t, calibrated_ms, t_ref, res: dict, rules: dict) -> None:
    """Work on a stream that does not wait for the caller's runs during the flush ahead of the timed call and slows
    it: the candidate's flush in its timed calls against the same flush in its calibration calls (same process,
    before the submission loaded) or, where higher, the reference's flush in the judge's process, timed between the
    candidate's batches after work of the same size (a calibration's flush varies from process to process). The
    reference's figure counts up to the bound over the calibration: a submission that
    slowed the reference's flushes would otherwise raise its own yardstick."""
    if not t.flush_ms:
        if calibrated_ms:  # it flushed while calibrating, before the submission loaded
            flag(res, "timer_tampered", "no L2 flush time came back from the candidate's timed calls, though its "
                  "calibration flushed")
        return
    cand = statistics.median(t.flush_ms)
    ref = statistics.median(t_ref.flush_ms) if t_ref is not None and t_ref.flush_ms else None
    res["flag_details"]["flush_ms"] = {"candidate": cand, "calibration": calibrated_ms,
                                       **({"reference": ref} if ref is not None else {})}
    if calibrated_ms:
        yardstick = max(calibrated_ms, min(ref or 0.0, rules["flush_slowdown"] * calibrated_ms))
        if cand > rules["flush_slowdown"] * yardstick and cand - yardstick > rules["flush_slowdown_min_ms"]:
            flag(res, "side_stream_work", f"the L2 flush ahead of the candidate's timed calls took {cand * 1e3:.1f} "
                  f"us (median), against {calibrated_ms * 1e3:.1f} us in its calibration before the submission loaded"
                  + (f" and {ref * 1e3:.1f} us ahead of the reference's calls" if ref is not None else "")
                  + ": work of forward on another stream ran during it, or L2 lines it kept persisting were reset "
                  "ahead of it (the flush resets them, so that they do not outlive it)")
    if calibrated_ms and cand < rules["flush_floor_share"] * calibrated_ms:
        flag(res, "timer_tampered", f"the L2 flush ahead of the candidate's timed calls took {cand * 1e3:.1f} us "
              f"(median), against {calibrated_ms * 1e3:.1f} us in its calibration: it did not flush the cache as "
              "calibrated, so its calls found their inputs in cache")

