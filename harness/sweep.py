"""`kb baselines measure`: eager and torch.compile timings of every problem's reference.

Compilation is CPU work and parallel; timing is GPU work and exclusive. So the sweep runs in
two phases: (1) worker processes compile every reference in parallel, which fills the on-disk
Inductor/Triton caches; (2) isolated children time the problems one at a time on a quiet GPU,
recompiling from those caches and choosing each kernel's config there (no_cached_autotune_winners). Each
child first times a fixed calibration (timing.calibrate), which its rows carry, so that medians from two machines
can be set side by side. Rows are appended to a JSONL file as they are measured, so a re-run measures only what
is missing; a problem that fails still gets a row saying why.
"""
from __future__ import annotations

import concurrent.futures as cf
import datetime as dt
import json
import os
import threading
import time
from pathlib import Path

from kb_data import __version__ as HARNESS_VERSION
from kb_data.problems import ProblemSet
from kb_data.schema import Baseline
from kb_data.harness.worker import context, device_lock, run_isolated, run_per_device


def no_cached_autotune_winners() -> None:
    """Inductor times a kernel's candidate configs on its first call (a reduction has up to six) and by default
    stores the winner on disk beside the kernel, for every later process to reuse. Phase 1 times them on a GPU that
    every compile worker shares, so a stored winner is a pick made under contention, and phase 2 would time that.
    Off, each timing child picks again on its own quiet GPU. Both phases must set it: the setting is written into
    the generated code, and the FX graph cache that phase 2 loads it from does not key on it."""
    import torch._inductor.config as inductor_config

    inductor_config.autotune_local_cache = False


def _warm_compile(problem_id: str, code: str, rules: dict, device: str) -> tuple[str, float, str | None]:
    """Phase 1 (in a pool process): compile the reference once so phase 2 finds it in the caches."""
    import torch

    from kb_data.problems import exec_problem_code
    from kb_data.harness.reference import build_reference, compile_reference, private_compile_caches

    t0 = time.monotonic()
    private_compile_caches()  # the folder phase 2 loads from
    try:
        import torch._inductor.config as inductor_config

        inductor_config.compile_threads = 1  # the pool already runs one compile per core
        no_cached_autotune_winners()
        torch.cuda.set_device(torch.device(device))
        mod = exec_problem_code(code, problem_id)
        ref = build_reference(mod, rules, device, 0)
        compile_reference(ref, mod, rules, device)
        return problem_id, time.monotonic() - t0, None
    except Exception as e:
        return problem_id, time.monotonic() - t0, f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"


COMPILE_MEMORY_FACTOR = 4        # inputs and weights, their CUDA-graph copies, outputs and intermediates
COMPILE_MEMORY_MIN = 2 << 30     # Inductor's autotuning and a CUDA context come on top of any problem
COMPILE_MEMORY_SHARE = 0.8       # of each GPU's memory that phase 1 may plan to fill


def footprint_bytes(code: str, problem_id: str) -> int:
    """What compiling a reference needs on the GPU, from its inputs and weights on the meta device."""
    import torch

    from kb_data.meta import tensor_bytes
    from kb_data.problems import exec_problem_code
    from kb_data.harness.reference import _input_specs

    try:
        mod = exec_problem_code(code, problem_id)
        with torch.device("meta"):
            model = mod.Model(*mod.get_init_inputs())
        held = [x for x in _input_specs(mod) if isinstance(x, torch.Tensor)] + list(model.parameters()) + list(model.buffers())
        data = sum(tensor_bytes(t) for t in held)
    except Exception:
        return 16 << 30  # unknown: plan for a large one
    return max(COMPILE_MEMORY_MIN, COMPILE_MEMORY_FACTOR * data)


def place(need: float, room: dict, busy: dict) -> str | None:
    """The GPU for a compile that needs `need` bytes: the one with most room left if it fits there; one with
    nothing running if it fits nowhere (a problem larger than any GPU's share runs alone); else None (wait)."""
    fits = [d for d in room if need <= room[d]] or [d for d in room if busy[d] == 0]
    return max(fits, key=lambda d: room[d]) if fits else None


def _compile_all(pids: list[str], loaded: dict, devices: list[str], workers: int, budget_s: float, log):
    """Phase 1: compile in parallel processes, each on a GPU with room for it. A process per core would
    exhaust a GPU's memory on problems with GB-sized inputs, so each GPU
    takes compiles only while their planned footprints fit in its memory. Returns (number finished, late ids)."""
    import torch

    room = {d: COMPILE_MEMORY_SHARE * torch.cuda.get_device_properties(torch.device(d)).total_memory for d in devices}
    need = {pid: footprint_bytes(loaded[pid].code, pid) for pid in pids}
    pending = sorted(pids, key=lambda p: -need[p])  # the big ones first, while the GPUs are empty
    running: dict = {}  # future -> (pid, device)
    deadline = time.monotonic() + budget_s
    pool = cf.ProcessPoolExecutor(max_workers=workers, mp_context=context())
    finished = 0
    try:
        while pending or running:
            for pid in list(pending):
                if len(running) >= workers:
                    break
                busy = {d: sum(1 for _, dd in running.values() if dd == d) for d in devices}
                d = place(need[pid], room, busy)
                if d is not None:
                    room[d] -= need[pid]
                    running[pool.submit(_warm_compile, pid, loaded[pid].code, loaded[pid].rules, d)] = (pid, d)
                    pending.remove(pid)
            if not running:
                break
            done, _ = cf.wait(running, timeout=max(0.0, deadline - time.monotonic()), return_when=cf.FIRST_COMPLETED)
            if not done:
                break  # out of time
            for f in done:
                pid, d = running.pop(f)
                room[d] += need[pid]
                finished += 1
                err = f.result()[2] if f.exception() is None else f"{type(f.exception()).__name__}: {f.exception()}"
                if err:
                    log(f"  compile {pid}: {err}")
    finally:
        for proc in list(getattr(pool, "_processes", {}).values()):
            proc.kill()  # a compile that hangs must not hold the sweep
        pool.shutdown(wait=False, cancel_futures=True)
    return finished, [pid for pid, _ in running.values()] + pending


def measure_chunk(job: dict) -> dict:
    """Phase 2 (in an isolated child): time each problem of the chunk; one failure does not stop the chunk."""
    import torch

    from kb_data.problems import exec_problem_code
    from kb_data.harness.reference import (_first_lines, _input_sets, build_reference, measure_baseline,
                                         private_compile_caches, problem_degenerate_reason, use_gpu, versions)
    from kb_data.harness.timing import calibrate

    device = torch.device(job["device"])
    out = {"rows": [], "versions": versions()}
    private_compile_caches()
    no_cached_autotune_winners()
    if device.type == "cuda":
        use_gpu(device, out)
        try:
            out["calibration"] = calibrate(device)
        except Exception as e:  # a figure of the machine is worth less than the rows: they go on without it
            out["calibration_error"] = f"{type(e).__name__}: {_first_lines(e, 2)}"
        torch.cuda.empty_cache()
    for item in job["problems"]:
        pid, rules = item["problem_id"], item["rules"]
        row = {"problem_id": pid}
        t0 = time.monotonic()
        try:
            mod = exec_problem_code(item["code"], pid)
            ref = build_reference(mod, rules, device, 0)
            sub = dict(job, compile_baseline=item["compile"])
            if item.get("trials"):
                sub["trials"] = item["trials"]
            row.update(measure_baseline(mod, ref, rules, device, sub))
            if job.get("degenerate") and row.get("eager_ms") is not None:
                row["degenerate_reason"] = problem_degenerate_reason(ref, rules, _input_sets(mod, rules, device, job))
            del ref
        except Exception as e:
            row["error"] = f"{type(e).__name__}: {_first_lines(e, 4)}"
        row["seconds"] = time.monotonic() - t0
        out["rows"].append(row)
        if device.type == "cuda":
            torch.cuda.empty_cache()
    return out


def _done(path: Path, method: str) -> set[str]:
    """Problems with a row in `path` timed by `method` (a row of an older timing method is measured again)."""
    from kb_data.harness.baselines import row_timing_method

    if not path.exists():
        return set()
    done = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
            if row_timing_method(row) == method:
                done.add(row["problem_id"])
        except (json.JSONDecodeError, KeyError, AttributeError):
            continue
    return done


def sweep(problem_ids: list[str], out_path: Path, *, problems_root=None, gpu: str | None = None,
          device: str | list[str] = "cuda:0", compile_suites=("v3",), workers: int = 8, chunk: int = 8,
          chunk_timeout_s: float = 600, max_seconds: float | None = None, problems_revision: str | None = None,
          compile_budget_s: float = 300,
          log=print) -> list[dict]:
    """Measure every problem not yet in `out_path`; return the new rows. `device` may list several GPUs:
    the compile phase spreads over them and each times its share of the chunks, one chunk at a time."""
    from kb_data.gpus import gpu_key
    from kb_data.harness.baselines import measured_fields
    from kb_data.problems import problems_revision_of
    from kb_data.harness.timing import timing_method

    devices = [device] if isinstance(device, str) else list(device)
    ps = ProblemSet(problems_root)
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    done = _done(out_path, timing_method(devices[0]))
    todo = [pid for pid in problem_ids if pid not in done]
    loaded = {pid: ps.load(pid) for pid in todo}
    log(f"{len(done)} measured before, {len(todo)} to measure")
    t_start = time.monotonic()

    # references with a documented defect cannot compile either
    to_compile = [pid for pid in todo if loaded[pid].suite in compile_suites and not loaded[pid].metadata.get("KNOWN_ISSUE")]
    not_compiled: dict[str, str] = {}  # problem -> why phase 2 times it eagerly only
    if to_compile and devices[0].startswith("cuda"):
        t0 = time.monotonic()
        finished, late = _compile_all(to_compile, loaded, devices, workers, compile_budget_s, log)
        for pid in late:
            # compiling it cold in phase 2 could take the whole chunk down with it: eager only, and the row says why
            not_compiled[pid] = f"torch.compile did not finish within the sweep's {compile_budget_s:.0f} s compile budget"
            log(f"  compile {pid}: not done within {compile_budget_s:.0f} s; timed eagerly only")
        log(f"phase 1: compiled {finished}/{len(to_compile)} references with up to {workers} workers "
            f"in {time.monotonic() - t0:.0f} s")

    new_rows: list[dict] = []
    revisions: dict[str, str | None] = {}
    lock = threading.Lock()

    def record(rows: list[dict], res: dict) -> None:
        gpu_name = res.get("gpu_name")
        key = gpu or gpu_key(gpu_name)
        for r in rows:
            lp = loaded[r["problem_id"]]
            rev = revisions.setdefault(lp.suite, problems_revision or problems_revision_of(lp))
            b = Baseline(
                problem_id=lp.problem_id, suite=lp.suite, gpu=key, gpu_name=gpu_name,
                **measured_fields(r, compile_error=r.get("compile_error") or not_compiled.get(r["problem_id"])),
                timing_method=timing_method(res.get("device") or "cpu"), calibration=res.get("calibration"), level=lp.level, problem=lp.file,
                problem_sha256=lp.sha256, harness_version=HARNESS_VERSION, problems_revision=rev,
                measured_at=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), source="measured",
                **{k: (res.get("versions") or {}).get(k) for k in ("torch_version", "cuda_version", "triton_version", "driver_version")})
            b.validate()
            row = b.to_row()
            row["degenerate_reason"] = r.get("degenerate_reason")  # problem-level evidence, merged into the problems dataset
            row["seconds"] = r.get("seconds")
            row["device"] = res.get("device")
            with open(out_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(row, sort_keys=True) + "\n")
                f.flush()
                os.fsync(f.fileno())
            new_rows.append(row)
            log(f"  {b.problem_id}: eager {b.eager_ms} compile {b.compile_ms} -> {b.baseline_type}; GPU alone: eager "
                f"{b.eager_gpu_ms} compile {b.compile_gpu_ms}" + (f" ERROR {b.error}" if b.error else "")
                + (f" (GPU alone: {b.gpu_alone_error})" if b.gpu_alone_error else ""))

    stopped: list[bool] = []

    def out_of_time() -> bool:
        with lock:
            if max_seconds and time.monotonic() - t_start > max_seconds:
                if not stopped:
                    stopped.append(True)
                    log(f"stopping: time budget of {max_seconds:.0f} s spent; re-run to measure the rest")
                return True
            return False

    def time_chunk(device: str, part: list[str]) -> None:
        # each GPU times one chunk at a time, alone on that GPU
        job = {"entry": "baselines", "device": device, "degenerate": True, "problems": [
            {"problem_id": pid, "code": loaded[pid].code, "rules": loaded[pid].rules,
             "compile": loaded[pid].suite in compile_suites and pid not in not_compiled} for pid in part]}
        with device_lock(device):
            res = run_isolated(measure_chunk, job, chunk_timeout_s)
        got = {r["problem_id"] for r in res.get("rows") or []}
        rows = (res.get("rows") or []) + [{"problem_id": pid, "error": f"{res.get('status')}: {res.get('error')}"}
                                          for pid in part if pid not in got]
        res["device"] = device
        with lock:
            if res.get("calibration_error"):
                log(f"  calibration on {device}: {res['calibration_error']}; these rows go without one")
            record(rows, res)

    run_per_device(devices, [todo[i:i + chunk] for i in range(0, len(todo), chunk)], time_chunk, stop=out_of_time)
    log(f"measured {len(new_rows)} problems in {time.monotonic() - t_start:.0f} s "
        f"({60 * len(new_rows) / max(time.monotonic() - t_start, 1e-9):.1f} problems/min)")
    return new_rows


def ship(sweep_files: list[Path], data_dir: Path, gpu: str) -> tuple[int, int]:
    """Merge sweep output into the shipped data: `baselines_<gpu>.jsonl` (Baseline rows) and
    `problem_checks_<gpu>.jsonl` (the degenerate-problem evidence the sweep gathers on the side).
    One row per problem and timing method: a problem measured again the same way replaces its row (later files
    win); a row of another method stays beside it (its times are another measurement, not an older copy of
    this one: BaselineIndex.lookup picks by method). One check per problem, the most recently measured.
    Returns (baseline rows, check rows) written."""
    from kb_data.harness.baselines import row_timing_method
    from kb_data.io import read_jsonl, read_jsonl_rows, write_bytes_atomic

    key = gpu.lower()
    bpath, cpath = data_dir / f"baselines_{key}.jsonl", data_dir / f"problem_checks_{key}.jsonl"
    slot = lambda row: (row["problem_id"], row_timing_method(row))
    shipped = [Baseline.from_row(row, where=f"{where}: ") for where, row in read_jsonl(bpath)] if bpath.exists() else []
    baselines = {slot(r): r for r in (b.to_row() for b in shipped)}
    checks = {r["problem_id"]: r for r in read_jsonl_rows(cpath)} if cpath.exists() else {}
    for path in sweep_files:
        for lineno, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            row = json.loads(line)
            extra = {k: row.pop(k, None) for k in ("degenerate_reason", "seconds", "device")}
            b = Baseline.from_row(row)  # refuses a malformed row, naming the field
            if b.gpu != gpu:
                raise ValueError(f"{path}:{lineno}: a {b.gpu} row, not {gpu}")
            measured = b.to_row()
            baselines[slot(measured)] = measured
            last = checks.get(b.problem_id, {}).get("measured_at") or ""
            if b.status == "ok" and (b.measured_at or "") >= last:  # an older measurement shipped late keeps the newer check
                checks[b.problem_id] = {
                    "problem_id": b.problem_id, "problem_sha256": b.problem_sha256, "gpu": gpu,
                    "degenerate": extra["degenerate_reason"] is not None, "degenerate_reason": extra["degenerate_reason"],
                    "inputs": "the timing input sets: seeds timing_seed+0,1,2 (two sets when one is over 2.7 GB)",
                    "measured_at": b.measured_at}
    order = sorted(baselines)
    write_bytes_atomic(bpath, "".join(json.dumps(baselines[p], sort_keys=True) + "\n" for p in order).encode("utf-8"))
    write_bytes_atomic(cpath, "".join(json.dumps(checks[p], sort_keys=True) + "\n" for p in sorted(checks)).encode("utf-8"))
    return len(baselines), len(checks)
