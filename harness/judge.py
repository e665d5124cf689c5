"""The trusted checker: grades one submission that runs in a sandboxed process it never shares.

The judge builds the reference from the pinned problem file, draws every input (public seeds, the secret
one, and a fresh secret draw for each check and each timed call), computes the reference's outputs, times
the reference on its own GPU clock and compares what the candidate wrote into the judge's output slots.
The candidate (harness/candidate.py) receives tensors and never a seed, a reference output or a verdict;
its replies are validated field by field, and the times it reports are bounded by the judge's own clock.
`judge(job)` returns a plain dict; the grading parent turns it into a RunRecord.
"""
from __future__ import annotations

import gc
import json
import re

import torch

from kb_data.harness import channel, timing, worker
from kb_data.harness.channel import ChannelError
from kb_data.harness.checks import dynamic_checks, heavy_due, heavy_probe, secret_weights
from kb_data.harness.session import Candidate, cpu_threads, draw_seed, flag, judged, run_candidate, weight_slots
from kb_data.harness.reference import (
    Stage, _Stages, _call, _first_lines, _input_specs, _outputs, _sample, build_reference, clone_inputs, make_inputs,
    degenerate_reason, measure_baseline, paired_reference, private_compile_caches, use_gpu, versions)
from kb_data.harness.round_trip import calibrate
from kb_data.harness.sandbox import SandboxUnavailable
from kb_data.problems import ProblemError, exec_problem_code
from kb_data.harness.timed import MAX_BATCH, batch_size, time_paired
from kb_data.rules import precision_class, tolerance, tolerance_precision



def judge(job: dict) -> dict:
    """Grade one submission; never raises (every failure becomes a status)."""
    private_compile_caches()
    res = {"status": None, "error": None, "compiled": False, "correct": False, "flags": [], "flag_details": {},
           "seeds": None, "versions": {}, "stage_s": {}, "sandbox": None}
    try:
        _judge(job, res)
    except Stage as s:
        res["status"], res["error"] = s.status, s.message
        if res["correct"] and s.status not in ("rejected", "incorrect"):
            # past correctness the candidate knows what it is being asked: ending its grading at a check it can
            # tell apart (raising, hanging, dying, a reply's own status) turned that check's rejection into a
            # failure's higher reward (red team, session 44: the profiled call, the float64 comparison)
            worker.unfinished(res, f"{s.status}: {s.message}")
    except SandboxUnavailable as e:
        res["status"], res["error"] = "runtime_error", f"sandbox: {e}"
        _retire(res)
    except torch.cuda.OutOfMemoryError as e:
        where = getattr(res.get("_candidate"), "stage", "start")  # the candidate's last request: the judge's stage
        res["status"], res["error"] = "runtime_error", (f"CUDA out of memory in the judge in stage '{where}' (this GPU "
                                                        f"may be too small for the problem): {str(e).splitlines()[0]}")
        _retire(res)
    except ChannelError as e:  # a reply that fails validation: the candidate's doing
        res["status"], res["error"] = "rejected", f"the candidate's reply was invalid: {e}"
    except Exception as e:  # a judge-side failure caused by what the candidate left behind
        why = f"judge: {type(e).__name__}: {_first_lines(e)}"
        if res["compiled"]:  # with its code loaded, a check the judge could not finish fails it: a build file, a
            # mapping or a process state that made the judge raise turned a rejection into a runtime_error's higher
            # reward (red team, session 42)
            worker.unfinished(res, why)
        else:
            res["status"], res["error"] = "runtime_error", why
        _retire(res)
    finally:
        cand = res.pop("_candidate", None)
        if cand is not None:
            t0, before = timing._perf_counter(), res["status"]
            cand.close(res)
            res["stage_s"]["sandbox_close"] = timing._perf_counter() - t0
            if res["correct"] and res["status"] != before:
                # its memory overrun found as it closed (at the exit command, after every check: a flag of the
                # grading parent's, the roofline's, laundered into a failure's 0; red team, session 44)
                worker.unfinished(res, f"{res['status']}: {res['error']}")
        if job.get("resident"):  # this job's tensors, returned to the GPU for the next candidate
            gc.collect()
            if torch.cuda.is_initialized():
                torch.cuda.empty_cache()
    if res["status"] is None:
        res["status"] = "ok"
    res["flags"] = sorted(set(res["flags"]))
    return res


def _retire(res: dict) -> None:
    """A failure of the judge's own: a resident judge forgets its prepared reference and ends after this job."""
    _warm.clear()
    res["retire"] = True


def _judge(job: dict, res: dict):
    rules, device = job["rules"], torch.device(job["device"])
    stage = _Stages(res["stage_s"])
    # forked before this process touches CUDA (the child initialises its own context); the submission loads later
    cand = Candidate(job, res)
    res["_candidate"] = cand
    mod, ref, paired_ref, published = _prepared(job, res, device, stage)

    seeds = list(rules["seeds"]) + ([draw_seed()] if rules["secret_seed"] else [])
    first = make_inputs(mod, seeds[0], device)
    first_ref = _call(ref, clone_inputs(first), 0, "the reference")
    precision = tolerance_precision([str(x.dtype) for x in first if isinstance(x, torch.Tensor) and x.is_floating_point()],
                                    [str(o.dtype) for o in _outputs(first_ref) if isinstance(o, torch.Tensor)
                                     and o.is_floating_point()], rules)
    atol, rtol = tolerance(rules, precision)
    res.update(precision_used=precision, atol=atol, rtol=rtol)
    if published != precision:
        res["flag_details"]["tolerance_class"] = (f"{precision} (from the reference's outputs and inputs); the suite's "
                                                  f"published rule would use {published}")

    ctx = {"samples": [], "out_meta": [torch.empty(o.shape, dtype=o.dtype, device="meta") if isinstance(o, torch.Tensor)
                                       else o for o in _outputs(first_ref)],
           "rebuild": lambda: build_reference(mod, rules, device, job.get("init_seed", 0))}  # checks' own copies
    del first_ref  # its shapes and dtypes are all that is kept: a large problem's output is gigabytes
    ctx["batch"] = batch_size(first, ctx["out_meta"], device, int(job.get("max_batch", MAX_BATCH)))
    ctx["heavy_due"] = heavy_due(first, ctx["out_meta"], precision)
    ctx["overhead_ms"] = calibrate(cand, first, ctx, device, rules, job)
    stage("calibration")

    load = {"cmd": "load", "code": job["submission_code"], "module_name": "submission.py", "problem_code": job["problem_code"],
            "problem_id": job["problem_id"], "device": str(device), "l2_flush": rules["l2_flush"],
            "class_names": [rules["candidate_class"]] + [n for n in ("ModelNew", "Model") if n != rules["candidate_class"]],
            "init_seed": rules["seeds"][0] if rules["weights"] == "same_seed" else None,
            "eval": rules["model_mode"] == "eval", "threads": cpu_threads()}
    state = ref.state_dict()
    if rules["weights"] == "load_state_dict":
        load["weights"] = weight_slots(cand, state, "w")
    reply = cand.request(load, "load")
    if rules["weights"] == "load_state_dict":
        res["flag_details"]["weights_loaded"] = _weights_loaded(reply, state)
    res["compiled"] = True
    stage("import_and_build_submission")

    res["seeds"] = seeds  # the secret one too: it is spent once the job is graded, and makes the record reproducible
    ctx["first"], first = first, None  # check_correctness lets it go after the second seed
    if not check_correctness(cand, mod, ref, rules, device, seeds, atol, rtol, res, ctx):
        return cand
    res["correct"] = True
    if worker.progress is not None:  # from here a worker killed before the verdict is a check that did not finish
        worker.progress(worker.OUTPUTS_MATCHED)
    stage("correctness")
    if not secret_weights(cand, mod, ref, rules, device, atol, rtol, res, ctx):
        return cand
    stage("secret_weights")

    ctx["precision"], ctx["degenerate"] = precision, degenerate_reason(ctx["samples"], atol, rtol)
    if ctx["heavy_due"]:
        heavy_probe(ref, mod, device, atol, rtol, res, ctx)
    time_paired(cand, mod, ref, paired_ref, rules, device, atol, rtol, res, ctx, job)
    stage("timing")

    dynamic_checks(cand, mod, ref, state, rules, device, precision, atol, rtol, res, ctx, job)
    stage("dynamic_checks")
    if cand.tampered:
        flag(res, "timer_tampered", f"the candidate's process replaced {', '.join(cand.tampered[:8])}")
    return cand


STATE_KEY = re.compile(r"[\w\-]+(\.[\w\-]+)*")  # a state dict key: module names and a tensor's name, dot-joined


def _weights_loaded(reply: dict, state: dict) -> dict:
    """The candidate's report of its load_state_dict, as the record keeps it: the keys it had and got no weight for,
    where they look like state dict keys, and the keys sent that it did not take; anything else is only counted
    (free text would let a submission write what it likes into a published record)."""
    missing = channel.string_list(reply, "missing", 200, 300)
    unexpected = channel.string_list(reply, "unexpected", 200, 300)
    out = {"missing": [k for k in missing if STATE_KEY.fullmatch(k)], "unexpected": [k for k in unexpected if k in state]}
    dropped = len(missing) + len(unexpected) - len(out["missing"]) - len(out["unexpected"])
    return {**out, "not_keys": dropped} if dropped else out


# A resident judge (worker.Resident) grades job after job of one problem: what `_prepared` made for the first is
# kept here and serves the next ones (the reference's weights restored first), unless its key differs.
_warm: dict = {}
PER_SUBMISSION = ("submission_code", "submission_name", "build_key", "arch", "build_cache_root", "timeout_s",
                  "memory_limit_bytes", "sandbox_level", "require_custom_kernel", "check_fp64", "resident")


def preparation_key(job: dict) -> str:
    """What the prepared reference depends on: the job without the fields that only concern the submission."""
    return json.dumps({k: v for k, v in job.items() if k not in PER_SUBMISSION}, sort_keys=True, default=str)


def _prepared(job: dict, res: dict, device, stage) -> tuple:
    """The problem's module, its reference (weights as built), the model timed beside the candidate and the
    suite's published tolerance class: made here, or taken from this resident judge's last job of the same key
    (a job that measures the baseline always makes its own)."""
    rules, key = job["rules"], preparation_key(job)
    res["versions"] = versions()  # after the fork: importing Triton may touch the CUDA driver
    if device.type == "cuda":
        use_gpu(device, res)
        # its CPU work is small (output samples, bookkeeping): a pool of threads per core only stalls each op on a
        # host busy with builds
        torch.set_num_threads(1)
    else:
        torch.set_num_threads(cpu_threads())  # judge and candidate each get half the cores: neither waits for the other
    if _warm.get("key") == key and not job.get("measure_baseline"):
        w = _warm
        w["ref"].load_state_dict(w["state"])  # an earlier job's secret weights were loaded in place
        res.update(w["res"])
        if w["paired_failed"]:
            res["flag_details"]["paired_reference"] = w["paired_failed"]
        w["jobs"] += 1
        res["flag_details"]["judge"] = f"resident: the reference was prepared {w['jobs'] - 1} job(s) earlier"
        stage("setup")
        return w["mod"], w["ref"], w["paired"], w["published"]
    _warm.clear()
    try:
        mod = exec_problem_code(job["problem_code"], job["problem_id"])
    except ProblemError as e:
        raise Stage("runtime_error", f"the problem failed to load: {e}")
    try:
        ref = build_reference(mod, rules, device, job.get("init_seed", 0))
    except Exception as e:
        raise Stage("runtime_error", f"the reference failed to build: {type(e).__name__}: {_first_lines(e)}")
    specs = _input_specs(mod)
    published = precision_class(next((str(x.dtype) for x in specs if isinstance(x, torch.Tensor)), None), rules)
    stage("setup")
    if job.get("measure_baseline"):
        res["baseline"] = measure_baseline(mod, ref, rules, device, job)
        stage("baseline")
    paired_ref = paired_reference(mod, ref, rules, device, job, res)
    stage("reference_alone")
    if job.get("resident") and not job.get("measure_baseline"):
        _warm.update(key=key, mod=mod, ref=ref, paired=paired_ref, published=published, jobs=1,
                     state={k: v.detach().clone() for k, v in ref.state_dict().items()},
                     res={k: res[k] for k in ("ref_alone_ms", "ref_paired_type") if k in res},
                     paired_failed=res["flag_details"].get("paired_reference"))
    return mod, ref, paired_ref, published


def check_correctness(cand, mod, ref, rules, device, seeds, atol, rtol, res, ctx) -> bool:
    worst_abs, worst_rel, public_ok, first = 0.0, 0.0, True, ctx.pop("first")
    for i, seed in enumerate(seeds):
        secret = i >= len(rules["seeds"])
        inputs = first if i == 0 else make_inputs(mod, seed, device)
        rng = draw_seed()
        ref_out = _call(ref, clone_inputs(inputs), rng, "the reference")
        reply, outs, why = run_candidate(cand, inputs, ref_out, rng, "correctness")  # copied into its slots
        if reply.get("threads_left"):
            flag(res, "side_stream_work", f"forward left {reply['threads_left']} thread(s) running")
        passed, why, a, r = judged(ref_out, outs, why, rules, atol, rtol, relative=True)  # the record's figures
        if outs is not None:
            worst_abs, worst_rel = max(worst_abs, a), max(worst_rel, r)
            res.update(max_abs_err=worst_abs, max_rel_err=worst_rel)
        if not passed:
            if "cannot be graded" in (why or ""):
                raise Stage("runtime_error", why)
            if secret and public_ok:
                flag(res, "stale_output", f"correct on the published seeds, wrong on a secret seed: {why}")
                res["status"], res["error"] = "rejected", f"wrong on a secret seed only: {why}"
            else:
                res["status"], res["error"] = "incorrect", f"seed {seed if not secret else '(secret)'}: {why}"
            return False
        if i == 0 and rules["require_bitwise_repeat"]:
            _, again, _ = run_candidate(cand, inputs, ref_out, rng, "correctness (repeat)")
            if again is None or not all(timing.bitwise_equal(x, y) for x, y in zip(outs, again) if x is not None):
                flag(res, "nondeterministic", "two runs on equal inputs differ bitwise")
        ctx["samples"].append((seed, [_sample(o) for o in outs if o is not None],
                               [_sample(o) for o in _outputs(ref_out) if isinstance(o, torch.Tensor)],
                               [_sample(x) for x in inputs if isinstance(x, torch.Tensor)]))
        if i == 1 and _same_inputs(first, inputs):
            flag(res, "seed_independent_inputs", "get_inputs gives the same values for every seed: the timed calls "
                  "and checks vary them with harness noise instead")
            ctx["seed_independent"] = True
        if i >= 1:
            first = None
        inputs = ref_out = outs = again = None  # a large problem's tensors are gigabytes: one seed's at a time
    return True


def _same_inputs(a: list, b: list) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a, b) if isinstance(x, torch.Tensor))
