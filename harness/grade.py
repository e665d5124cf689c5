"""Grade one submission: the straight pipeline, parent side.

    resolve problem -> static checks -> judge in a trusted worker (judge.py: reference, inputs, correctness
    over seeds, paired timing, dynamic checks), the submission in a sandbox of its own (candidate.py)
    -> baseline -> roofline -> RunRecord (written here only)

`grade()` returns a RunRecord (and a Baseline row when the baseline had to be measured);
it never raises for a bad submission.
"""
from __future__ import annotations

import ast
import datetime as dt
import hashlib
import json
import os
import platform
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from kb_data import __version__ as HARNESS_VERSION
from kb_data.gpus import gpu_key, roofline_ms
from kb_data.io import source_sha256, storable
from kb_data.meta import analyze_on_meta
from kb_data.problems import LoadedProblem, ProblemSet, problems_revision_of
from kb_data.rules import with_checks
from kb_data.schema import Baseline, RunRecord, SCHEMA_VERSION
from kb_data.harness.baselines import BaselineIndex, measured_fields
from kb_data.harness import build
from kb_data.harness.confine import unreachable
from kb_data.harness.sandbox import needed_paths, own_uid, resolve_level
from kb_data.harness.worker import cuda_device, cuda_devices, device_lock, run_isolated, thread_resident

DEFAULT_TIMEOUT_S = 600.0
JUDGE_GRACE_S = 120.0          # the judge ends a slow submission itself; the worker's own limit is a backstop
SANDBOX_BASE_BYTES = 6 << 30   # interpreter, torch, a CUDA context and an extension build
SANDBOX_CPU_FACTOR = 4         # on a CPU the tensors live in host memory: inputs, outputs and temporaries
BUILD_MEMORY_BYTES = 12 << 30  # nvcc and the C++ compiler, MAX_JOBS of them at once
FLAG_REASON_CHARS = 240      # of each failing flag's detail in a rejected record's error

# Names whose reassignment in a submission means it patches a timer or the harness.
TIMER_NAMES = {"perf_counter", "perf_counter_ns", "time", "monotonic", "synchronize", "elapsed_time", "record",
               "Event", "allclose", "equal", "manual_seed"}

# The profiler's state and the ways around its records (the dispatcher's redispatch runs no RecordFunction; record
# functions switched off): a kernel has no use for them, a submission that hides framework work from the profile does.
PROFILER_EVASION_NAMES = {"redispatch", "DispatchKeySet", "_enable_record_function", "_set_record_function_enabled",
                          "_is_profiler_enabled", "_profiler_enabled", "_ExcludeDispatchKeyGuard",
                          "_dispatch_tls_set_dispatch_key_excluded", "_dispatch_tls_local_exclude_set"}


@dataclass
class Options:
    model: str = "local"
    gpu: str | None = None                 # GPU key to record (default: from the device name)
    device: str | None = None              # cuda:N or cpu (default: cuda:0 when available)
    timeout_s: float = DEFAULT_TIMEOUT_S
    require_custom_kernel: bool = True     # False: framework ops allowed (grading the reference itself)
    check_fp64: bool = True
    measure_baseline: bool | None = None   # None: only when no baseline row is known
    compile_baseline: bool | None = None   # None: as the rules say
    pair_reference: bool = True            # time the baseline's model (eager, or compiled on a GPU) beside the submission
    sandbox: str = "auto"                  # auto | strict | strong | process | none (kb_data.harness.sandbox)
    memory_limit_gb: float | None = None   # host memory of the submission's processes (default: sized by the problem)
    progress: bool = False                 # say each stage on stderr as it starts, and the stage times at the end
    resident_judge: bool | None = None     # keep the thread's judge process and its prepared reference between jobs
                                           # of one problem (None: in batches and training loops, not for one grade)
    trials: int | None = None              # override the rules (tests, quick runs)
    warmup: int | None = None
    run_dir: str | None = None
    extra: dict = field(default_factory=dict)


# what decides a record's verdict or numbers besides the submission, the problem and the machine: a records folder
# holds records of one such setting, so that resuming never serves a record graded under another (red team, session
# 41: an --allow-framework record replayed to a strict loop as ok 5.2x)
VERDICT_OPTIONS = ("gpu", "timeout_s", "require_custom_kernel", "check_fp64", "measure_baseline", "compile_baseline",
                   "pair_reference", "sandbox", "memory_limit_gb", "trials", "warmup", "extra")


# the options that leave checks out, and what a record's flag_details.checks_off says of each (read back by what
# serves stored records: harness/batch.py)
CHECKS_OFF = {"require_custom_kernel": ("framework ops allowed", "(require_custom_kernel off): the profile and the "
                                        "framework checks did not run; a calibration or a reference's own grade, not a "
                                        "kernel's verdict"),
              "check_fp64": ("the float64 check off", "(check_fp64)")}


def verdict_options(opt: Options) -> dict:
    return json.loads(json.dumps({k: getattr(opt, k) for k in VERDICT_OPTIONS}, sort_keys=True, default=str))


def default_device() -> str:
    return "cuda:0" if cuda_devices() else "cpu"


def static_checks(code: str, name: str) -> dict:
    """What the source says before it runs: syntax, and patterns worth recording as evidence. A source Python
    cannot parse or this scan cannot walk (an expression nested past the parser's or the interpreter's depth,
    text that is not Unicode) is a syntax error of the submission's, never the grader's failure."""
    out = {"syntax_error": None, "findings": []}
    try:
        tree = ast.parse(code, filename=name)
        out["findings"] = _findings(tree)
    except SyntaxError as e:
        out["syntax_error"] = f"{name}: syntax error at line {e.lineno}: {e.msg}"
    except (ValueError, RecursionError, MemoryError) as e:
        out["syntax_error"] = f"{name}: cannot be parsed: {type(e).__name__}: {str(e)[:200]}"
    return out


def _findings(tree: ast.AST) -> list:
    out = {"findings": []}
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for t in targets:
            if isinstance(t, ast.Attribute) and t.attr in TIMER_NAMES:
                out["findings"].append(("timer_tampered", f"line {t.lineno}: assigns {ast.unparse(t)}"))
        if isinstance(node, ast.Call):
            fn = ast.unparse(node.func)
            if fn in ("setattr", "builtins.setattr") and len(node.args) >= 2:
                arg = node.args[1]
                if isinstance(arg, ast.Constant) and arg.value in TIMER_NAMES:
                    out["findings"].append(("timer_tampered", f"line {node.lineno}: setattr(..., {arg.value!r})"))
            if fn.endswith("torch.compile") or fn == "compile" and any(
                    isinstance(a, ast.Name) and a.id == "torch" for a in ast.walk(node)):
                out["findings"].append(("calls_reference_ops", f"line {node.lineno}: torch.compile"))
        named = (node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name)
                 else node.value if isinstance(node, ast.Constant) and isinstance(node.value, str)
                 else node.name if isinstance(node, ast.alias) else None)
        if named in PROFILER_EVASION_NAMES:
            out["findings"].append(("profile_mismatch", f"line {getattr(node, 'lineno', '?')}: {named} (the profiler's "
                                                        "state, or a way around its records)"))
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            mods = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if any(m.startswith("kb_data") for m in mods):
                out["findings"].append(("timer_tampered", f"line {node.lineno}: imports the harness ({', '.join(mods)})"))
    return out["findings"]


@lru_cache(maxsize=512)
def _meta_counts(problem_id: str, sha: str, code: str) -> tuple:
    from kb_data.problems import load_source

    m = analyze_on_meta(load_source(code, problem_id), with_trace=False)
    return m.flops, m.min_bytes


def grade(problem: LoadedProblem, code: str, *, name: str = "submission.py", options: Options | None = None,
          baselines: BaselineIndex | None = None, problems_revision: str | None = None) -> tuple[RunRecord, Baseline | None]:
    """Grade `code` (a submission's source) against `problem`; returns the record and any measured baseline."""
    opt = options or Options()
    device = opt.device or default_device()
    rules = with_checks(problem.rules)
    code, raw = storable(code), code
    sol_sha = source_sha256(raw)
    created = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    problems_revision = problems_revision or problems_revision_of(problem)
    rec = RunRecord(
        record_id="", model=opt.model, level=problem.level, problem=problem.file, op_type=problem.metadata.get("OP_TYPE"),
        run_dir=opt.run_dir, source="local", suite=problem.suite, problem_id=problem.problem_id,
        problems_revision=problems_revision, problem_sha256=problem.sha256, solution_sha256=sol_sha,
        solution_code=code, compiled=False, correct=False, flags=[], harness_version=HARNESS_VERSION,
        created_at=created, host=platform.node(), schema_version=SCHEMA_VERSION,
        device_index=int(device.split(":")[1]) if device.startswith("cuda:") else None,
    )
    static = static_checks(raw, name)  # text that is not Unicode fails here (and is stored with its escapes)
    if static["syntax_error"]:
        return _finish(rec, {"status": "compile_error", "error": static["syntax_error"]}, opt, device), None

    import torch

    from kb_data.harness.timing import timing_method

    gpu_name = (cuda_device(device) or {}).get("name")
    gpu = opt.gpu or (gpu_key(gpu_name) if gpu_name else "CPU")
    method = timing_method(device)
    # a stored baseline timed another way (an older harness) would make the speedup compare two different clocks
    known = (baselines or BaselineIndex([])).lookup(problem.problem_id, gpu, torch.__version__, method)
    measure = opt.measure_baseline if opt.measure_baseline is not None else known is None
    level = resolve_level(opt.sandbox)
    unreached = unreachable(needed_paths()) if level == "process" and own_uid(level) else []
    job = {
        "problem_id": problem.problem_id, "problem_code": problem.code, "rules": rules,
        "submission_code": code, "submission_name": name, "device": device, "timeout_s": opt.timeout_s,
        "sandbox_level": level, "memory_limit_bytes": memory_limit(problem, device, opt), "measure_baseline": measure,
        "require_custom_kernel": opt.require_custom_kernel, "check_fp64": opt.check_fp64,
        "pair_reference": opt.pair_reference, "baseline_type": known["baseline_type"] if known else None,
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
    }
    if opt.compile_baseline is not None:
        job["compile_baseline"] = opt.compile_baseline
    elif not device.startswith("cuda"):
        job["compile_baseline"] = False  # CPU runs: eager baseline (torch.compile on CPU needs minutes of C++ builds)
    for k in ("trials", "warmup"):
        if getattr(opt, k) is not None:
            job[k] = getattr(opt, k)
    job.update(opt.extra)
    say = (lambda msg: print(f"kb eval: {msg}", file=sys.stderr, flush=True)) if opt.progress else (lambda msg: None)
    if unreached:
        say(f"warning: {UNREACHED_WHY.format(unreached[0])}")
    if build_needed := build.needs_build(code):
        say(f"build: compiling the submission's extensions in a CPU sandbox ({level})")
    built = _build_stage(code, device, job, opt) if build_needed else {}  # outside the GPU lock
    if built.get("status") != "compile_error":
        say(f"grade: sandbox {level} on {device}; reference, correctness over {len(rules['seeds'])} seeds and a "
            f"secret one, paired timing, checks (up to {opt.timeout_s:.0f} s)")
    if built.get("status") == "compile_error":
        return _finish(rec, _note_unreached({**built, "sandbox": level, "stage_s": {"build": built.get("build_s", 0.0)},
                                             "wall_s": built.get("build_s")}, unreached), opt, device), None
    with device_lock(device):
        if opt.resident_judge and own_uid(level):
            from kb_data.harness.judge import preparation_key  # a batch's parent only: one `kb eval` never pays for it

            result = thread_resident(run_judge).submit({**job, "resident": True}, opt.timeout_s + JUDGE_GRACE_S,
                                                       key=preparation_key(job))
        else:
            result = run_isolated(run_judge, job, opt.timeout_s + JUDGE_GRACE_S)
    for k in ("build_s", "build_wait_s"):
        if built.get(k) is not None:
            result.setdefault("stage_s", {})[k[:-2]] = built[k]
    if opt.progress and result.get("stage_s"):
        say("stages (s): " + ", ".join(f"{k} {v:.2f}" for k, v in result["stage_s"].items()))
    for kind, detail in static["findings"]:
        if kind in ("calls_reference_ops", "profile_mismatch") and not opt.require_custom_kernel:
            continue  # framework ops allowed: torch.compile is one (the profiler's check is off too)
        result.setdefault("flags", []).append(kind)
        result.setdefault("flag_details", {}).setdefault(kind, detail)
    _note_unreached(result, unreached)
    rec.gpu, rec.gpu_name, rec.timing_method = gpu, result.get("gpu_name") or gpu_name, method
    baseline_row = None
    if result.get("baseline"):
        b = result["baseline"]
        baseline_row = Baseline(
            problem_id=problem.problem_id, suite=problem.suite, gpu=gpu, gpu_name=rec.gpu_name,
            **measured_fields(b), timing_method=method, level=problem.level, problem=problem.file,
            problem_sha256=problem.sha256, harness_version=HARNESS_VERSION, problems_revision=problems_revision,
            measured_at=created, source="measured", **{k: result.get("versions", {}).get(k) for k in
                                                       ("torch_version", "cuda_version", "triton_version", "driver_version")})
        known = baseline_row.to_row() if baseline_row.status == "ok" else None
    if known:
        rec.ref_ms, rec.baseline_type = known["baseline_ms"], known["baseline_type"]
        rec.eager_ms, rec.compile_ms = known.get("eager_ms"), known.get("compile_ms")
        rec.baseline_source = "measured"
    if result.get("ref_paired_ms") is not None:
        rec.ref_ms, rec.baseline_source = result["ref_paired_ms"], "paired"
        rec.baseline_type = result.get("ref_paired_type", "pytorch_eager")
        rec.ref_alone_ms = result.get("ref_alone_ms")
    rec = _finish(rec, result, opt, device)
    if result.get("correct") or rec.status == "rejected":  # the judge saw its outputs match, whatever the status
        _speed_checks(rec, problem, result)
    return rec, baseline_row


UNREACHED_WHY = ("the process sandbox's uid cannot reach {} (a folder on the way is closed to other users): a module "
                 "not imported before the sandbox dropped to that uid fails to import there, so a failure may be the "
                 "host's; grade at the strong level, or keep Python where other users may read it")


def _note_unreached(result: dict, unreached: list) -> dict:
    """The folders a process sandbox of its own uid could not reach, in the record; a failure's error says so too."""
    if unreached:
        result.setdefault("flag_details", {})["sandbox_unreachable"] = unreached[:8]
        if result.get("status") in ("compile_error", "runtime_error", "crashed"):
            result["error"] = f"{result.get('error') or ''}\n(harness) {UNREACHED_WHY.format(unreached[0])}"
    return result


def _build_stage(code: str, device: str, job: dict, opt: Options) -> dict:
    """Build the submission's extensions in a CPU sandbox unless its build is cached (harness/build.py); names
    the cached build in `job` for the grading sandbox."""
    build_job = build_job_for(code, device, job["sandbox_level"], job["memory_limit_bytes"], opt.timeout_s)
    job.update(build_key=build_job["key"], arch=build_job["arch"], build_cache_root=build_job["cache_root"])
    return build.ensure_built(build_job, opt.timeout_s + JUDGE_GRACE_S)


def run_judge(job: dict) -> dict:
    """The judge, imported in the worker child that runs it (its forkserver preloads it): the grading parent does not
    import the judge's stack (torch._dynamo among it, seconds of import)."""
    from kb_data.harness.judge import judge

    return judge(job)


def _fork_spawner_before_jobs() -> None:
    """The sandboxes' spawner, forked before the worker has a job: every candidate of a judge that stays up across
    jobs is a fork of it, and must hold nothing of the jobs before its own (their submissions' code)."""
    from kb_data.harness import candidate
    from kb_data.harness.sandbox import Spawner

    Spawner.of(candidate.serve)


run_judge.prepare_worker = _fork_spawner_before_jobs


def build_job_for(code: str, device: str, sandbox_level: str, memory_limit_bytes: int, timeout_s: float,
                  max_jobs: int | None = None) -> dict:
    """The build stage's job for `code` graded on `device` (its key decided here: workers may predate the env)."""
    arch = build.arch_list(device)
    return {"code": code, "key": build.cache_key(code, arch), "arch": arch, "timeout_s": timeout_s,
            "cache_root": str(build.cache_root()), "sandbox_level": sandbox_level, "max_jobs": max_jobs,
            "memory_limit_bytes": max(memory_limit_bytes, BUILD_MEMORY_BYTES)}


def memory_limit(problem: LoadedProblem, device: str, opt: Options) -> int:
    if opt.memory_limit_gb:
        return int(opt.memory_limit_gb * 2**30)
    need = SANDBOX_BASE_BYTES
    if not device.startswith("cuda"):
        need += SANDBOX_CPU_FACTOR * _meta_counts(problem.problem_id, problem.sha256, problem.code)[1]
    return need


def _finish(rec: RunRecord, result: dict, opt: Options, device: str) -> RunRecord:
    rec.status, rec.error = result.get("status"), result.get("error")
    rec.sandbox = result.get("sandbox")
    rec.compiled = bool(result.get("compiled"))
    for k in ("max_abs_err", "max_rel_err", "atol", "rtol", "sol_ms", "sol_p10_ms", "sol_p90_ms", "n_trials",
              "precision_used", "seeds"):
        if result.get(k) is not None:
            setattr(rec, k, result[k])
    for k, v in (result.get("versions") or {}).items():
        setattr(rec, k, v)
    rec.flags = sorted(set(result.get("flags") or []))
    details = result.get("flag_details") or {}
    for option, (said, why) in CHECKS_OFF.items():
        if not getattr(opt, option):  # every record says which checks its options left out (its flags alone cannot)
            details.setdefault("checks_off", []).append(f"{said} {why}")
    rec.flag_details = json.dumps(details, sort_keys=True, default=str) if details else None
    rec.correct = bool(result.get("correct"))
    if result.get("wall_s") is not None:
        rec.harness_seconds = json.dumps({"worker_wall": round(result["wall_s"], 4),
                                          **{k: round(v, 4) for k, v in (result.get("stage_s") or {}).items()}})
    _apply_fail_flags(rec, result)
    rec.record_id = record_id(rec)
    rec.validate()
    return rec


def _apply_fail_flags(rec: RunRecord, result: dict) -> None:
    from kb_data.rules import rules_for

    fail = set(rules_for(rec.suite)["fail_flags"]) if rec.suite else set()
    failing = [f for f in rec.flags if f in fail]
    if failing and rec.status == "ok":
        rec.status = "rejected"
        details = result.get("flag_details") or {}
        # each flag with the start of its reason: a verdict read alone (a log line, an RL reward's note) says why
        rec.error = "anti-cheat: " + "; ".join(f"{f} ({str(details[f])[:FLAG_REASON_CHARS]})" if details.get(f) else f
                                               for f in failing)
    if rec.status not in ("ok", "rejected"):
        rec.correct = False  # `correct` is numeric correctness (upstream's meaning); status says whether it is accepted
    if rec.status == "ok" and rec.correct and rec.ref_ms and rec.sol_ms:
        paired = result.get("paired_speedup") if rec.baseline_source == "paired" else None
        rec.speedup = paired or rec.ref_ms / rec.sol_ms
    else:
        rec.speedup = None  # a rejected record earns no speedup, whatever its outputs


def _speed_checks(rec: RunRecord, problem: LoadedProblem, result: dict) -> None:
    """Roofline and excessive-speedup flags, which need the problem's counts and the baseline."""
    if rec.sol_ms is None:
        return
    flops, min_bytes = _meta_counts(problem.problem_id, problem.sha256, problem.code)
    rules = with_checks(problem.rules)
    details = json.loads(rec.flag_details) if rec.flag_details else {}
    if rec.timing_method == "perf_counter":  # graded on this machine's CPU: its peaks as measured here
        from kb_data.harness.timing import cpu_peaks

        peaks = cpu_peaks()
        details["cpu_peaks"] = {k: round(v, 1) for k, v in peaks.items()}
        # an fp32 problem's GEMMs at the float32 rate (a bfloat16 unit several times faster would fail its precision)
        gemm = peaks["gemm_gflops_fp32" if (rec.precision_used or "fp32") == "fp32" else "gemm_gflops"]
        floor = max((flops or 0) / (gemm * 1e6), (min_bytes or 0) / (peaks["copy_gbs"] * 1e6)) or None
        slack, whose = rules["roofline_slack_cpu"], "this CPU's measured"
    else:
        floor = roofline_ms(rec.gpu, flops, min_bytes, rec.precision_used or "fp32")
        slack, whose = rules["roofline_slack"], f"{rec.gpu}'s"
    # the candidate's own claims as they came, before the judge timed any batch at its own figure: a claim under
    # the physical floor is a forgery even where a loaded host's clock made the floor slower than the work
    claimed = result.get("claimed_ms")  # 0.0 is a claim too
    fastest = rec.sol_ms if claimed is None else min(rec.sol_ms, claimed)
    if floor is not None:
        details["roofline_ms"] = floor
        if fastest < slack * floor:
            rec.flags = sorted(set(rec.flags) | {"exceeds_roofline"})
            details.setdefault("exceeds_roofline", f"{fastest:.4g} ms is under {slack:g} of the {floor:.4g} ms that "
                                                   f"{whose} peak compute and bandwidth allow for {flops} FLOPs and "
                                                   f"{min_bytes} bytes")
    if rec.ref_ms and rec.sol_ms and rec.ref_ms / rec.sol_ms > rules["excessive_speedup"]:
        rec.flags = sorted(set(rec.flags) | {"excessive_speedup"})
        details.setdefault("excessive_speedup", f"{rec.ref_ms / rec.sol_ms:.1f}x over the baseline")
    rec.flag_details = json.dumps(details, sort_keys=True, default=str) if details else None
    _apply_fail_flags(rec, result)
    rec.record_id = record_id(rec)


def record_id(rec: RunRecord) -> str:
    key = "|".join(str(x) for x in (rec.source, rec.problem_id, rec.problem_sha256, rec.solution_sha256, rec.gpu,
                                    rec.model, rec.run_dir, rec.created_at, rec.host, rec.device_index))
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def grade_file(problem_ref: str, submission: str | Path, *, suite: str | None = None, problems_root=None,
               options: Options | None = None, baselines: BaselineIndex | None = None):
    """`kb eval <problem> <submission.py>`: resolve the problem by id/name/file name and grade the file."""
    ps = ProblemSet(problems_root)
    problem = ps.load(problem_ref, suite)
    path = Path(submission)
    code = path.read_text(encoding="utf-8", errors="replace")
    return grade(problem, code, name=str(path), options=options, baselines=baselines)
