"""The trusted checker: grades one submission that runs in a sandboxed process it never shares.

The judge builds the reference from the pinned problem file, draws every input (public seeds, the secret
one, and a fresh secret draw for each check and each timed call), computes the reference's outputs, times
the reference on its own GPU clock and compares what the candidate wrote into the judge's output slots.
The candidate (harness/candidate.py) receives tensors and never a seed, a reference output or a verdict;
its replies are validated field by field, and the times it reports are bounded by the judge's own clock.
`judge(job)` returns a plain dict; the grading parent turns it into a RunRecord.
"""
from __future__ import annotations

import math
import os
import re
import signal
import secrets
import statistics
from contextlib import contextmanager

import torch

from kb_data.harness import candidate, channel, timing
from kb_data.harness.channel import ChannelError
from kb_data.harness.reference import (
    Stage, _call, _first_lines, _outputs, _rel_change, _sample, _fp64_feasible, build_reference, compare, degenerate_reason,
    make_inputs, measure_baseline, paired_reference, clone_inputs, _input_specs, use_gpu, versions, _Stages)
from kb_data.harness.build import seed_work_dir
from kb_data.harness.sandbox import Limits, Sandbox, SandboxUnavailable
from kb_data.io import lock_dir
from kb_data.problems import ProblemError, exec_problem_code
from kb_data.rules import OP_FAMILIES, precision_class, tolerance, tolerance_precision

CPU_MARGIN_FACTOR = 10.0      # CPU timing bounds: the GPU margins scaled (time slices are milliseconds)
CPU_SLOWDOWN_FACTOR = 100.0
PRECISION_FLOOR_SCALE = {"fp32": 1.0, "fp16": 100.0, "bf16": 400.0}
REDUCED_PRECISION_KERNEL_RE = re.compile(r"bf16|f16|fp16|half|h884|h1688|h16816|hmma|tf32|s16816|i8816|e4m3|e5m2", re.I)
# Kernels from the framework itself or a vendor library: a candidate that launches only these wrote no kernel.
FRAMEWORK_KERNEL_RE = re.compile(
    r"at::|at_cuda_detail|\bcub::|cublas|cutlass|cudnn|xmma|nvjet|sgemm|hgemm|gemv2|gemmSN|gemmk1|splitKreduce|"
    r"implicit_convolve|precomputed_convolve|explicit_convolve|im2col|col2im|\bfft|flash_fwd|fmha|pytorch_flash|"
    r"triton_(poi|per|red|tem|for)_|^Memcpy|^Memset|cask_|elementwise_kernel|reduce_kernel|CatArrayBatchedCopy|"
    r"cutensor|cusparse|curand|indexSelect|gatherTopK|radixSort|bitonicSort|^void \(anonymous namespace\)::", re.I)


def judge(job: dict) -> dict:
    """Grade one submission; never raises (every failure becomes a status)."""
    res = {"status": None, "error": None, "compiled": False, "correct": False, "flags": [], "flag_details": {},
           "seeds": None, "versions": {}, "stage_s": {}, "sandbox": None}
    try:
        _judge(job, res)
    except Stage as s:
        res["status"], res["error"] = s.status, s.message
    except SandboxUnavailable as e:
        res["status"], res["error"] = "runtime_error", f"sandbox: {e}"
    except torch.cuda.OutOfMemoryError as e:
        res["status"], res["error"] = "runtime_error", f"CUDA out of memory in the judge: {str(e).splitlines()[0]}"
    except ChannelError as e:  # a reply that fails validation: the candidate's doing
        res["status"], res["error"] = "rejected", f"the candidate's reply was invalid: {e}"
    except Exception as e:  # a judge-side failure caused by what the candidate left behind
        res["status"], res["error"] = "runtime_error", f"judge: {type(e).__name__}: {_first_lines(e)}"
    finally:
        cand = res.pop("_candidate", None)
        if cand is not None:
            cand.close(res)
    if res["status"] is None:
        res["status"] = "ok"
    res["flags"] = sorted(set(res["flags"]))
    return res


def _flag(res: dict, name: str, detail) -> None:
    res["flags"].append(name)
    res["flag_details"].setdefault(name, detail)


class Candidate:
    """The judge's handle on the sandboxed process: commands out, validated replies in, slots for tensors."""

    def __init__(self, job: dict, res: dict):
        self.device = torch.device(job["device"])
        self.deadline = timing._perf_counter() + float(job.get("timeout_s", 600))
        self.stage = "start"
        level = job.get("sandbox_level") or "process"
        limits = Limits(memory_bytes=int(job.get("memory_limit_bytes") or 8 << 30))
        self.sb = Sandbox(level, limits, job["device"], lock_dir(),
                          extra_env={"TORCH_CUDA_ARCH_LIST": job["arch"]} if job.get("arch") else None)
        if job.get("build_key"):  # extensions built before the GPU lock (harness/build.py)
            res["flag_details"]["build_cache"] = "hit" if seed_work_dir(self.sb.work, job["build_key"], self.sb.uid) else "miss"
        self.sb.start(candidate.serve)
        self.arena = channel.SlotArena(self.device, self.sb.work, owner_uid=self.sb.uid)
        self.tampered: list[str] = []
        self._pids = None
        self.res = res
        res["sandbox"] = level

    def request(self, msg: dict, stage: str) -> dict:
        """Send a command and wait for its reply (within the job's time); a dead, silent or malformed
        candidate ends the grading with a status naming the stage."""
        self.stage = stage
        left = self.deadline - timing._perf_counter()
        if left <= 0:
            raise Stage("timeout", f"timed out in stage '{stage}': the job's time ran out")
        try:
            channel.send(self.sb.sock, msg)
            reply = channel.recv(self.sb.sock, timeout_s=left)
        except ChannelError as e:
            self._ended(stage, str(e))
        self.tampered += [t for t in channel.string_list(reply, "tampered", 64, 200) if t not in self.tampered] \
            if isinstance(reply.get("tampered"), list) else []
        if not channel.field(reply, "ok", bool):
            status = reply.get("status") if reply.get("status") in ("compile_error", "runtime_error") else "runtime_error"
            raise Stage(status, f"{stage}: " + str(reply.get("error") or "the candidate failed")[:4000])
        return reply

    def _ended(self, stage: str, why: str):
        if self.sb.memory_exceeded:
            raise Stage("memory_exceeded", f"in stage '{stage}': {self.sb.memory_exceeded}")
        if "no message within" in why:
            self.sb.kill()
            raise Stage("timeout", f"timed out in stage '{stage}' ({why}); the sandbox was killed")
        code = self.sb.wait(5)
        how = ("is still running" if code is None else f"was killed by {signal.Signals(-code).name}" if code < 0
               else f"exited with code {code}")
        tail = self.sb.log_tail()
        raise Stage("crashed", f"the candidate's process {how} in stage '{stage}' ({why})"
                    + (f"\n--- candidate output (tail) ---\n{tail}" if tail else ""))

    def slot_inputs(self, inputs: list) -> list:
        """Write inputs into the candidate's input slots; the message part that names them."""
        out = []
        for j, x in enumerate(inputs):
            if isinstance(x, torch.Tensor):
                desc, t = self.arena.tensor(f"in{j}", x.dtype, x.shape)
                t.copy_(x)
                out.append({"slot": desc.to_msg()})
            else:
                if not isinstance(x, (int, float, bool, str, type(None))):
                    raise Stage("runtime_error", f"input {j} of type {type(x).__name__} cannot be handed over")
                out.append({"value": x})
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        return out

    def out_slots(self, ref_out) -> list:
        descs = []
        for k, o in enumerate(_outputs(ref_out)):
            if isinstance(o, torch.Tensor):
                descs.append(self.arena.tensor(f"out{k}", o.dtype, o.shape)[0].to_msg())
        return descs

    def outputs(self, reply: dict, ref_out) -> tuple[list | None, str | None]:
        """The candidate's outputs as private copies, or why they cannot be judged (structure, type, dtype)."""
        seen = channel.field(reply, "outputs", list, max_len=64)
        refs = _outputs(ref_out)
        if len(seen) != len(refs):
            return None, f"returned {len(seen)} outputs, expected {len(refs)}"
        outs = []
        for k, (info, r) in enumerate(zip(seen, refs)):
            where = f"output {k}: " if len(refs) > 1 else ""
            if not isinstance(info, dict):
                raise ChannelError("an output description must be an object")
            kind = channel.field(info, "type", str, max_len=200)
            if not isinstance(r, torch.Tensor):
                outs.append(None)
                continue
            if kind.startswith("subclass:"):  # it can defer or fake the work until someone reads it
                why = f"{where}the output is a tensor subclass ({kind.split(':', 1)[1]}), not a plain torch.Tensor"
                _flag(self.res, "lazy_output", why)
                raise Stage("rejected", why)
            if kind != "Tensor":
                return None, f"{where}expected a tensor, got {kind.removeprefix('other:')}"
            shape, dtype = channel.field(info, "shape", list, max_len=16), channel.field(info, "dtype", str, max_len=40)
            if shape != list(r.shape):
                return None, f"{where}shape {tuple(shape)}, expected {tuple(r.shape)}"
            if dtype != channel.dtype_name(r.dtype):
                return None, f"{where}dtype {dtype}, expected {channel.dtype_name(r.dtype)} (the reference's)"
            dev = channel.field(info, "device", str, max_len=40)
            if torch.device(dev) != self.device:
                return None, f"{where}on {dev}, expected {self.device}"
            outs.append(self.arena.slots[f"out{k}"][1].clone())
        return outs, None

    @contextmanager
    def paused(self, i: int):
        """The sandbox's processes stopped while the judge times its reference: nothing of the submission's
        (a thread, a child) competes with it for the CPU. The process list is refreshed every 16 calls."""
        if i % 16 == 0 or self._pids is None:
            self._pids = self.sb.pids()
        stopped = []
        for pid in self._pids:
            try:
                os.kill(pid, signal.SIGSTOP)
                stopped.append(pid)
            except OSError:
                pass
        try:
            yield
        finally:
            for pid in stopped:
                try:
                    os.kill(pid, signal.SIGCONT)
                except OSError:
                    pass

    def close(self, res: dict) -> None:
        try:
            if self.sb.alive() and self.sb.sock is not None:
                try:
                    channel.send(self.sb.sock, {"cmd": "exit"})
                except (OSError, ChannelError):
                    pass
            res["peak_host_memory_bytes"] = self.sb.peak_rss
            if self.sb.memory_exceeded and res.get("status") in (None, "ok", "crashed", "runtime_error"):
                res["status"], res["error"] = "memory_exceeded", f"in stage '{self.stage}': {self.sb.memory_exceeded}"
        finally:
            self.sb.close()
            self.arena.close()


def cpu_threads() -> int:
    return max(1, (os.cpu_count() or 2) // 2)


def _rng() -> int:
    return secrets.randbelow(2**31 - 2) + 1


def _judge(job: dict, res: dict):
    rules, device = job["rules"], torch.device(job["device"])
    stage = _Stages(res["stage_s"])
    # forked before this process touches CUDA (the child initialises its own context); the submission loads later
    cand = Candidate(job, res)
    res["_candidate"] = cand
    res["versions"] = versions()  # after the fork: importing Triton may touch the CUDA driver
    if device.type == "cuda":
        use_gpu(device, res)
    else:
        torch.set_num_threads(cpu_threads())  # judge and candidate each get half the cores: neither waits for the other
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

    seeds = list(rules["seeds"]) + ([_rng()] if rules["secret_seed"] else [])
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
                                       else o for o in _outputs(first_ref)], "out_copy_ms": _copy_ms(first_ref)}
    ctx["overhead_ms"] = calibrate(cand, first, ctx, device, rules)
    stage("calibration")

    load = {"cmd": "load", "code": job["submission_code"], "module_name": "submission.py", "problem_code": job["problem_code"],
            "problem_id": job["problem_id"], "device": str(device), "l2_flush": rules["l2_flush"],
            "class_names": [rules["candidate_class"]] + [n for n in ("ModelNew", "Model") if n != rules["candidate_class"]],
            "init_seed": rules["seeds"][0] if rules["weights"] == "same_seed" else None,
            "eval": rules["model_mode"] == "eval", "threads": cpu_threads()}
    state = ref.state_dict()
    if rules["weights"] == "load_state_dict":
        load["weights"] = _weight_slots(cand, state, "w")
    reply = cand.request(load, "load")
    if rules["weights"] == "load_state_dict":
        res["flag_details"]["weights_loaded"] = {"missing": channel.string_list(reply, "missing", 200, 300),
                                                 "unexpected": channel.string_list(reply, "unexpected", 200, 300)}
    res["compiled"] = True
    stage("import_and_build_submission")

    res["seeds"] = seeds  # the secret one too: it is spent once the job is graded, and makes the record reproducible
    if not check_correctness(cand, mod, ref, rules, device, seeds, atol, rtol, res, ctx, first):
        return cand
    res["correct"] = True
    stage("correctness")

    time_paired(cand, mod, ref, paired_ref, rules, device, atol, rtol, res, ctx, job)
    stage("timing")

    dynamic_checks(cand, mod, ref, state, rules, device, precision, atol, rtol, res, ctx, job)
    stage("dynamic_checks")
    if cand.tampered:
        _flag(res, "timer_tampered", f"the candidate's process replaced {', '.join(cand.tampered[:8])}")
    return cand


def _weight_slots(cand: Candidate, state: dict, prefix: str) -> list:
    out = []
    for k, (key, v) in enumerate(state.items()):
        desc, t = cand.arena.tensor(f"{prefix}{k}", v.dtype, v.shape)
        t.copy_(v.detach())
        out.append({"key": key, "slot": desc.to_msg()})
    if cand.device.type == "cuda":
        torch.cuda.synchronize(cand.device)
    return out


def judged(ref_out, outs, why, rules, atol, rtol) -> tuple[bool, str | None, float, float]:
    """The suite's comparison of the candidate's outputs with the reference's, or the structural reason they
    could not be compared: (passed, why not, max abs err, max rel err)."""
    if why is not None:
        return False, why, math.inf, math.inf
    return compare(ref_out, outs if len(outs) > 1 else outs[0], rules, atol, rtol)


def run_candidate(cand: Candidate, inputs: list, ref_out, rng: int, stage: str, cmd: str = "forward"):
    """The candidate on `inputs` (written into its slots): (reply, private copies of its outputs or None, why not)."""
    msg = {"cmd": cmd, "inputs": cand.slot_inputs(inputs), "outputs": cand.out_slots(ref_out), "rng": rng}
    reply = cand.request(msg, stage)
    outs, why = cand.outputs(reply, ref_out)
    return reply, outs, why


def check_correctness(cand, mod, ref, rules, device, seeds, atol, rtol, res, ctx, first) -> bool:
    worst_abs, worst_rel, public_ok = 0.0, 0.0, True
    for i, seed in enumerate(seeds):
        secret = i >= len(rules["seeds"])
        inputs = first if i == 0 else make_inputs(mod, seed, device)
        rng = _rng()
        ref_out = _call(ref, clone_inputs(inputs), rng, "the reference")
        reply, outs, why = run_candidate(cand, clone_inputs(inputs), ref_out, rng, "correctness")
        if reply.get("threads_left"):
            _flag(res, "side_stream_work", f"forward left {reply['threads_left']} thread(s) running")
        if reply.get("aliases_input") is True:
            _flag(res, "output_aliases_input", f"seed #{i}: the output shares storage with an input")
        passed, why, a, r = judged(ref_out, outs, why, rules, atol, rtol)
        if outs is not None:
            worst_abs, worst_rel = max(worst_abs, a), max(worst_rel, r)
            res.update(max_abs_err=worst_abs, max_rel_err=worst_rel)
        if not passed:
            if "cannot be graded" in (why or ""):
                raise Stage("runtime_error", why)
            if secret and public_ok:
                _flag(res, "stale_output", f"correct on the published seeds, wrong on a secret seed: {why}")
                res["status"], res["error"] = "rejected", f"wrong on a secret seed only: {why}"
            else:
                res["status"], res["error"] = "incorrect", f"seed {seed if not secret else '(secret)'}: {why}"
            return False
        if i == 0 and rules["require_bitwise_repeat"]:
            _, again, _ = run_candidate(cand, clone_inputs(inputs), ref_out, rng, "correctness (repeat)")
            if again is None or not all(torch.equal(x, y) for x, y in zip(outs, again) if x is not None):
                _flag(res, "nondeterministic", "two runs on equal inputs differ bitwise")
        ctx["samples"].append((seed, [_sample(o) for o in outs if o is not None],
                               [_sample(o) for o in _outputs(ref_out) if isinstance(o, torch.Tensor)],
                               [_sample(x) for x in inputs if isinstance(x, torch.Tensor)]))
        if i == 1 and _same_inputs(first, inputs):
            _flag(res, "seed_independent_inputs", "get_inputs gives the same values for every seed: the timed calls "
                  "and checks vary them with harness noise instead")
            ctx["seed_independent"] = True
    return True


def _same_inputs(a: list, b: list) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a, b) if isinstance(x, torch.Tensor))


def fresh_inputs(mod, device, ctx: dict | None = None) -> list:
    """Inputs under a secret seed nobody has seen; for a problem whose inputs ignore the seed, with noise added
    to its floating inputs so that no two calls share values."""
    inputs = make_inputs(mod, _rng(), device)
    if ctx and ctx.get("seed_independent"):
        g = torch.Generator(device=device).manual_seed(_rng())
        inputs = [x + 0.01 * x.std().clamp_min(1e-3) * torch.randn(x.shape, generator=g, device=device, dtype=x.dtype)
                  if isinstance(x, torch.Tensor) and x.is_floating_point() and x.numel() > 1 else x for x in inputs]
    return inputs


# ---------------------------------------------------------------------------
# Timing: the candidate's calls timed in its process (claims), the reference's here, trial for trial

def time_paired(cand, mod, ref, paired_ref, rules, device, atol, rtol, res, ctx, job) -> None:
    timer = timing.Timer(device, l2_flush=rules["l2_flush"])
    warmup, trials = job.get("warmup", rules["warmup"]), job.get("trials", rules["trials"])
    min_ms = job.get("min_timed_ms", timing.MIN_PAIRED_MS if paired_ref is not None else timing.MIN_TIMED_MS)
    claims, ref_times, walls, cand_flush, ref_flush, late = [], [], [], [], [], []
    stale, i = None, 0
    model = paired_ref if paired_ref is not None else ref
    work = None  # the reference's inputs live in the same buffers every call, as the candidate's (its slots) do
    while i < warmup + trials or (device.type == "cuda" and sum(claims) < min_ms and i < timing.MAX_TRIALS):
        inputs = fresh_inputs(mod, device, ctx)
        if work is None or any(isinstance(w, torch.Tensor) and w.shape != x.shape for w, x in zip(work, inputs)):
            work = clone_inputs(inputs)
        else:
            for w, x in zip(work, inputs):
                if isinstance(w, torch.Tensor):
                    w.copy_(x)
        timer.flush()  # as the candidate does after its input copies: both timed flushes start from a clean L2
        timing.synchronize(device)
        rng = _rng()
        order = ("cand", "ref") if i % 2 == 0 else ("ref", "cand")
        for side in order:
            if side == "ref":
                torch.manual_seed(rng)
                with cand.paused(i):
                    ms, ref_out, _, fl = timer._timed(lambda _i: _no_grad(model, work), i)
                if i >= warmup:
                    ref_times.append(ms)
                    if fl is not None:
                        ref_flush.append(fl)
            else:
                msg = {"cmd": "timed", "inputs": cand.slot_inputs(inputs), "rng": rng,
                       "outputs": cand.out_slots(ctx["out_meta"])}
                h0 = timing._perf_counter()
                reply = cand.request(msg, "timing")
                wall = (timing._perf_counter() - h0) * 1e3
                claim = channel.field(reply, "ms", float)
                fl = channel.field(reply, "flush_ms", float, optional=True)
                cand_reply = reply
                if i >= warmup:
                    claims.append(claim)
                    walls.append(wall)
                    if fl is not None:
                        cand_flush.append(fl)
                    if reply.get("late") is True:
                        late.append(i)
        outs, why = cand.outputs(cand_reply, ref_out)
        ok, why, _, _ = judged(ref_out, outs, why, rules, atol, rtol)
        if not ok and stale is None:
            stale = f"timed call {i}: {why}"
        del ref_out
        i += 1
    if stale:
        _flag(res, "stale_output", f"an output did not match its call's fresh inputs ({stale})")
    cand_t, ref_t = timing.Timing(claims, device.type, cand_flush, late), timing.Timing(ref_times, device.type, ref_flush)
    res.update(sol_ms=cand_t.median_ms, sol_p10_ms=cand_t.p10_ms, sol_p90_ms=cand_t.p90_ms, n_trials=len(claims))
    _bound_claims(res, claims, walls, ctx["overhead_ms"], rules, device)
    if late:
        _flag(res, "side_stream_work", f"{len(late)} timed call(s) (first: {late[0]}) were still writing their output "
              "after forward returned: work on another stream, outside the timed interval")
    _flush_check(cand_t, ref_t if paired_ref is not None else None, res)
    if paired_ref is not None:
        res["ref_paired_ms"] = ref_t.median_ms
        res["paired_speedup"] = timing.paired_ratio(cand_t, ref_t)
        limit = rules["reference_slowdown_limit"]
        margin = rules["reference_slowdown_min_ms"] * (1 if device.type == "cuda" else CPU_SLOWDOWN_FACTOR)
        if ref_t.p10_ms > limit * res["ref_alone_ms"] and ref_t.p10_ms - res["ref_alone_ms"] > margin:
            _flag(res, "reference_tampered", f"beside the submission the reference's p10 was {ref_t.p10_ms:.4g} ms, "
                  f"alone before it was loaded its median was {res['ref_alone_ms']:.4g} ms (limit {limit}x)")


def _no_grad(model, inputs):
    with torch.no_grad():
        return model(*inputs)


def _copy_ms(out) -> float:
    """What copying these outputs once costs here (the candidate copies its outputs into the slots after each call)."""
    ts = [o for o in _outputs(out) if isinstance(o, torch.Tensor)]
    if not ts:
        return 0.0
    dst = [torch.empty_like(o) for o in ts]
    dev = ts[0].device
    best = math.inf
    for _ in range(3):
        h0 = timing._perf_counter()
        for d, s in zip(dst, ts):
            d.copy_(s)
        timing.synchronize(dev)
        best = min(best, (timing._perf_counter() - h0) * 1e3)
    return best


def calibrate(cand, inputs, ctx, device, rules, calls: int = 16) -> float:
    """What a timed call's round trip costs beyond its own time, measured in the candidate's process before the
    submission is loaded there (so it cannot inflate it): a model that does no work, timed as every call is."""
    cand.request({"cmd": "calibrate", "device": str(device), "l2_flush": rules["l2_flush"], "threads": cpu_threads(),
                  "outputs": cand.out_slots(ctx["out_meta"])}, "calibration")
    extra = []
    for i in range(calls):
        msg = {"cmd": "timed", "inputs": cand.slot_inputs(inputs), "rng": 0, "outputs": cand.out_slots(ctx["out_meta"])}
        h0 = timing._perf_counter()
        reply = cand.request(msg, "calibration")
        wall = (timing._perf_counter() - h0) * 1e3
        if i >= 3:
            extra.append(wall - channel.field(reply, "ms", float))
    return statistics.median(extra)


def _bound_claims(res, claims, walls, overhead_ms, rules, device) -> None:
    """The candidate's reported times against the judge's clock: each timed call's round trip, less what a round
    trip costs with no work (calibrated before the submission loaded), is the trusted figure. A claim far under
    it was not measured but made up."""
    if not claims or not walls:
        _flag(res, "check_failed", "timing: no timed call came back to bound")
        return
    trusted = statistics.median(w - overhead_ms for w in walls)
    claimed = statistics.median(claims)
    margin = rules["timing_bound_margin_ms"] * (1 if device.type == "cuda" else CPU_MARGIN_FACTOR)
    res["flag_details"]["timing_bound"] = {"claimed_ms": claimed, "trusted_ms": trusted, "overhead_ms": overhead_ms,
                                           "margin_ms": margin}
    if trusted > rules["timing_bound_slack"] * claimed + margin:
        _flag(res, "timer_tampered", f"the judge's clock gives {trusted:.4g} ms per timed call, the candidate "
              f"reported {claimed:.4g} ms (allowed: x{rules['timing_bound_slack']} + {margin:g} ms)")


FLUSH_SLOWDOWN = 1.10          # the flush ahead of the candidate's calls may take this much longer than the reference's ...
FLUSH_SLOWDOWN_MIN_MS = 0.004  # ... and this much more


def _flush_check(t, t_ref, res: dict) -> None:
    """Work on a stream that does not wait for the caller's runs during the flush ahead of the timed call and slows
    it: the candidate's flush against the reference's in the same paired loop."""
    if not t.flush_ms:
        return
    cand = statistics.median(t.flush_ms)
    ref = statistics.median(t_ref.flush_ms) if t_ref is not None and t_ref.flush_ms else None
    res["flag_details"]["flush_ms"] = {"candidate": cand, **({"reference": ref} if ref is not None else {})}
    if ref and cand > FLUSH_SLOWDOWN * ref and cand - ref > FLUSH_SLOWDOWN_MIN_MS:
        _flag(res, "side_stream_work", f"the L2 flush ahead of the candidate's timed calls took {cand * 1e3:.1f} us "
              f"(median), ahead of the reference's {ref * 1e3:.1f} us: work of forward on another stream ran during it")


# ---------------------------------------------------------------------------
# Dynamic checks: each on its own fresh secret inputs; one that cannot run fails the record (check_failed)

def dynamic_checks(cand, mod, ref, state, rules, device, precision, atol, rtol, res, ctx, job) -> None:
    checks = [
        ("profile", job.get("require_custom_kernel", True), lambda: profile_checks(cand, mod, ref, rules, device, precision, res, ctx)),
        ("constant", True, lambda: constant_check(res, ctx, rules)),
        ("degenerate", True, lambda: degenerate_checks(cand, mod, ref, rules, device, precision, atol, rtol, res, ctx)),
        ("fp64", job.get("check_fp64", True), lambda: precision_check(cand, mod, ref, rules, device, precision, res, ctx)),
        ("weights", True, lambda: weights_check(cand, mod, ref, state, rules, device, atol, rtol, res, ctx)),
    ]
    for name, enabled, run in checks:
        if not enabled:
            continue
        try:
            run()
        except Stage:
            raise
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            _flag(res, "check_failed", f"{name}: out of GPU memory")
        except ChannelError as e:
            _flag(res, "check_failed", f"{name}: the candidate's reply was unusable ({e})")


def _families(ops: set[str], kernels: set[str], families: list[str]) -> dict[str, list[str]]:
    """The op families among these aten ops and GPU kernels of the framework or a vendor library (a kernel of
    the submission's own may well be named after its op): {family: evidence}."""
    found = {}
    library = {k for k in kernels if FRAMEWORK_KERNEL_RE.search(k)}
    for fam in families:
        spec = OP_FAMILIES[fam]
        names = {f"aten::{o}" for o in spec["ops"]}
        ev = sorted(ops & names)
        ev += sorted(k for k in library if re.search(spec["kernels"], k, re.I))[:3]
        if ev:
            found[fam] = ev[:6]
    return found


def _profile_ref(ref, inputs, device):
    from torch.profiler import ProfilerActivity, profile

    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.type == "cuda" else [])
    with profile(activities=acts) as prof:
        _call(ref, clone_inputs(inputs), 0, "the reference")
        timing.synchronize(device)
    ops = {e.name for e in prof.events() if e.name.startswith("aten::")}
    kernels = {e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA}
    return ops, kernels


def profile_checks(cand, mod, ref, rules, device, precision, res, ctx) -> None:
    """The reference's heavy op families that the candidate also runs (by aten op or by the vendor kernel that
    does the work, whoever launched it), and whether any kernel of its own ran."""
    inputs = fresh_inputs(mod, device, ctx)
    ref_ops, ref_kernels = _profile_ref(ref, inputs, device)
    ref_out = _call(ref, clone_inputs(inputs), 0, "the reference")
    reply, _, _ = run_candidate(cand, inputs, ref_out, _rng(), "profile", cmd="profile")
    ops, kernels = set(channel.string_list(reply, "ops", 2000, 300)), set(channel.string_list(reply, "kernels", 2000, 300))
    forbidden = rules.get("forbidden_op_families") or []
    ref_fams = _families(ref_ops, ref_kernels, forbidden)
    cand_fams = _families(ops, kernels, list(ref_fams))
    if cand_fams:
        _flag(res, "calls_reference_ops", "the candidate runs the reference's heavy work through the framework: "
              + "; ".join(f"{f}: {', '.join(ev)}" for f, ev in sorted(cand_fams.items())))
    if device.type == "cuda":
        res["flag_details"]["kernels"] = sorted(kernels)[:40]
        custom = sorted(k for k in kernels if not FRAMEWORK_KERNEL_RE.search(k))
        if not custom:
            _flag(res, "no_custom_kernel", "the profiler saw only framework kernels"
                  + (f": {', '.join(sorted(kernels)[:6])}" if kernels else " (none at all)"))
        if precision == "fp32":
            low = sorted(k for k in kernels if REDUCED_PRECISION_KERNEL_RE.search(k))
            if low:
                res["flag_details"]["reduced_precision_kernels"] = low[:10]
    else:
        res["flag_details"]["cpu_ops"] = sorted(ops)[:40]


def constant_check(res, ctx, rules) -> None:
    """Outputs that do not move across seeds while the reference's do (one-element outputs included)."""
    samples = ctx["samples"]
    if len(samples) < 2:
        _flag(res, "check_failed", "constant: fewer than two correctness samples")
        return
    (_, c0, r0, _), rest = samples[0], samples[1:]
    rel = rules["constant_rel"]
    for _, c, r, _ in rest:
        for a, b, ra, rb in zip(c0, c, r0, r):
            if _rel_change(a, b) <= rel and _rel_change(ra, rb) > rel:
                _flag(res, "constant_output", "the output did not change across seeds while the reference's did")
                return


def degenerate_checks(cand, mod, ref, rules, device, precision, atol, rtol, res, ctx) -> None:
    """On a problem whose output is nearly constant or nearly an input under the suite's inputs, the candidate
    must also be right on off-distribution inputs (standard normal, scaled by 3), unless it is as close to
    float64 as the reference is there."""
    reason = degenerate_reason(ctx["samples"], atol, rtol)
    if not reason:
        return
    _flag(res, "degenerate_problem", reason)
    g = torch.Generator(device=device).manual_seed(_rng())
    base = fresh_inputs(mod, device, ctx)
    off = [torch.randn(x.shape, generator=g, device=device, dtype=x.dtype) * 3 if isinstance(x, torch.Tensor)
           and x.is_floating_point() else x for x in base]
    rng = _rng()
    ref_out = _call(ref, clone_inputs(off), rng, "the reference")
    if not all(torch.isfinite(o.float()).all() for o in _outputs(ref_out) if isinstance(o, torch.Tensor)):
        return
    _, outs, why = run_candidate(cand, off, ref_out, rng, "degenerate check")
    passed, why, _, _ = judged(ref_out, outs, why, rules, atol, rtol)
    if passed:
        return
    if outs is not None:
        errors = _fp64_errors(ref, outs, off, rng) if _fp64_feasible(off, precision) else None
        if isinstance(errors, list) and all(ec <= _fp64_bound(er, precision, rules) for er, ec in errors):
            res["flag_details"]["off_distribution"] = (f"outside the tolerance ({why}), but as close to float64 as the "
                                                       f"reference: {errors}")
            return
    _flag(res, "input_overfit", f"right on the suite's inputs, wrong on off-distribution inputs: {why}")


def _fp64_bound(e_ref: float, precision: str, rules: dict) -> float:
    return max(rules["precision_factor"] * e_ref, rules["precision_floor"] * PRECISION_FLOOR_SCALE.get(precision, 1.0))


def _fp64_errors(ref, cand_outs, inputs, rng) -> list[tuple[float, float]] | str:
    """(reference's, candidate's) relative error to a float64 run of the reference, for every floating output.
    The float64 reference runs here, where the submission cannot reach; a string says why it could not."""
    import copy

    try:
        ref64 = copy.deepcopy(ref).double()
        ins64 = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in clone_inputs(inputs)]
        out64 = _call(ref64, ins64, rng, "the float64 reference")
        del ref64
    except Exception as e:  # ops without float64 kernels: a property of the problem, the same for every submission
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
    if precision not in PRECISION_FLOOR_SCALE:
        return
    inputs = fresh_inputs(mod, device, ctx)
    if not _fp64_feasible(inputs, precision):
        res["flag_details"]["fp64_check"] = "not run: the float64 copies would not fit"
        return
    rng = _rng()
    ref_out = _call(ref, clone_inputs(inputs), rng, "the reference")
    _, outs, why = run_candidate(cand, inputs, ref_out, rng, "float64 check")
    if why is not None:
        _flag(res, "check_failed", f"fp64: {why}")
        return
    errors = _fp64_errors(ref, outs, inputs, rng)
    if isinstance(errors, str):
        res["flag_details"]["fp64_check"] = errors
        return
    res["flag_details"]["fp64_rel_err"] = [{"reference": er, "candidate": ec} for er, ec in errors]
    low_kernels = res["flag_details"].get("reduced_precision_kernels")
    for k, (e_ref, e_cand) in enumerate(errors):
        bound = _fp64_bound(e_ref, precision, rules)
        if e_cand > bound or (low_kernels and e_cand > 4 * e_ref + 1e-7):
            _flag(res, "precision_downgrade", f"output {k}: error vs float64 {e_cand:.3g}, the reference's {e_ref:.3g} "
                  f"(bound {bound:.3g})" + (f"; reduced-precision kernels: {', '.join(low_kernels[:3])}" if low_kernels else ""))
            return


def weights_check(cand, mod, ref, state, rules, device, atol, rtol, res, ctx) -> None:
    """Perturb the reference's weights (a secret draw), load them into the candidate as grading loads weights
    (by key, whatever its own names are), and require its output to follow the perturbed reference's."""
    import copy

    floats = {k for k, v in state.items() if v.is_floating_point() and v.numel()}
    if not floats:
        return
    gen = torch.Generator(device="cpu").manual_seed(_rng())
    perturbed = {}
    for k, v in state.items():
        if k in floats:
            noise = torch.randn(v.shape, generator=gen).to(v.device, v.dtype)
            scale = float(v.float().abs().mean()) or 1.0
            perturbed[k] = v * (1 + 0.25 * noise) if "running_var" in k else v + 0.25 * scale * noise
        else:
            perturbed[k] = v
    ref_p = copy.deepcopy(ref)
    ref_p.load_state_dict(perturbed)
    cand.request({"cmd": "load_weights", "weights": _weight_slots(cand, perturbed, "p")}, "weights check")
    inputs = fresh_inputs(mod, device, ctx)
    rng = _rng()
    ref_out = _call(ref_p, clone_inputs(inputs), rng, "the reference")
    unperturbed = _call(ref, clone_inputs(inputs), rng, "the reference")
    if compare(unperturbed, ref_out, rules, atol, rtol)[0]:
        res["flag_details"]["weights_check"] = "the perturbation does not change the reference's output here"
        return
    _, outs, why = run_candidate(cand, inputs, ref_out, rng, "weights check")
    passed, why, _, _ = judged(ref_out, outs, why, rules, atol, rtol)
    if not passed:
        _flag(res, "ignores_weights", f"with perturbed weights loaded: {why}")
